#!/usr/bin/env node
// Builds dist/netns-worker.mjs: the pool worker's entry as one self-contained
// file. A program that bundles netns carries netns's main-thread code but not
// dist/, so `netns runtime <dir>` copies this file beside the addon for it
// (see src/core/runtime-files.ts). The ordinary install uses dist/run/worker.js.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeTarget } from './node-target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [join(root, 'src', 'run', 'worker.ts')],
  outfile: join(root, 'dist', 'netns-worker.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: nodeTarget(root),
  // No source map: its sources would name files the package does not ship (tslib's).
  sourcemap: false,
  logLevel: 'warning',
});

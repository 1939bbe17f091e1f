#!/usr/bin/env node
// Builds examples/cni-ptp as it ships: dist/cni-ptp.cjs, one CommonJS file
// with netns and its dependencies inside, run by `node` once per command, and
// dist/cni-ptp-daemon.cjs, its resident entry (docs/cni.md, Resident mode).
// One file because Node 20 spends about a millisecond on each ES module it
// loads (the example's graph is over a hundred); CommonJS because import()
// of a bundled module then becomes a call that runs that module's code when
// first needed, so VERSION runs none of the plumbing and ADD none of GC's.
// The same recipe, for a plugin outside this repository, is in
// docs/cni-packaging.md.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeTarget } from './node-target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const example = join(root, 'examples', 'cni-ptp');
const entries = { 'cni-ptp.cjs': 'main.ts', 'cni-ptp-daemon.cjs': 'daemon.ts' };

for (const [output, entry] of Object.entries(entries)) {
  const outfile = join(example, 'dist', output);
  await bundle(join(example, 'src', entry), outfile);
  chmodSync(outfile, 0o755); // each starts with a #! line: the file can be the plugin binary (or the daemon) itself
}

function bundle(entry, outfile) {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: nodeTarget(root),
    // netns finds its addon and exec helper from its modules' URL (src/core/runtime-files.ts):
    // the bundle gives them a URL in this repository's dist/core, three folders up from the
    // bundle, so they are found in build/Release as when the example ran from dist/. Made
    // when first asked for: VERSION never needs it.
    define: { 'import.meta.url': 'importMeta.url' },
    banner: { js: "const importMeta = { get url() { return require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', '..', '..', 'dist', 'core', 'runtime-files.js')).href; } };" },
    supported: { 'dynamic-import': false },
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: false,
    logLevel: 'warning',
  });
}

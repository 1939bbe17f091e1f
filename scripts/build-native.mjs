#!/usr/bin/env node
// `npm run build`'s native half. `npm ci` has just compiled the addon (the
// install script), so a configured build/ is only brought up to date (make
// finds nothing to do); an unconfigured one is configured and built.
// `node-gyp rebuild` (npx node-gyp rebuild, or rm -r build) starts clean.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNodeGyp } from './node-gyp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const configured = existsSync(join(root, 'build', 'Makefile')) && existsSync(join(root, 'build', 'config.gypi'));
process.exitCode = runNodeGyp(configured ? ['build'] : ['rebuild'], { cwd: root });

#!/usr/bin/env node
// `prepack`: a release tarball carries the binaries of every release target
// (prebuilds.mjs), so that installing it needs no compiler there. Refuses to
// pack without them. Checks the package folder given, else this checkout.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingFiles, RELEASE_TARGETS } from './prebuilds.mjs';

const root = process.argv[2] ? resolve(process.argv[2]) : join(dirname(fileURLToPath(import.meta.url)), '..');
const missing = RELEASE_TARGETS.flatMap((target) => missingFiles(root, target));
if (missing.length > 0) {
  console.error(`netns: not packing without the prebuilt binaries; missing:\n${missing.map((path) => `  ${path}`).join('\n')}\nRun \`npm run prebuilds\` first (see docs/maintainers.md).`);
  process.exit(1);
}

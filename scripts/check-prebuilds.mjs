#!/usr/bin/env node
// `prepack`: a release tarball carries the binaries of every release target
// (prebuilds.mjs), so that installing it needs no compiler there. Refuses to
// pack without them, or with any older than the sources they are made from
// (new JavaScript beside an old addon). Checks the package folder given, else
// this checkout. Anything else in prebuilds/ (a staging folder a killed
// `npm run prebuilds` left) would be packed too: refused as well.
import { readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFresh, missingFiles, prebuildDir, RELEASE_TARGETS } from './prebuilds.mjs';

const root = process.argv[2] ? resolve(process.argv[2]) : join(dirname(fileURLToPath(import.meta.url)), '..');
const missing = RELEASE_TARGETS.flatMap((target) => missingFiles(root, target));
if (missing.length > 0) {
  console.error(`netns: not packing without the prebuilt binaries; missing:\n${missing.map((path) => `  ${path}`).join('\n')}\nRun \`npm run prebuilds\` first (see docs/maintainers.md).`);
  process.exit(1);
}
const stale = RELEASE_TARGETS.filter((target) => !isFresh(root, target)).map((target) => prebuildDir(root, target));
if (stale.length > 0) {
  console.error(`netns: not packing prebuilt binaries older than native/ or binding.gyp:\n${stale.map((path) => `  ${path}`).join('\n')}\nRun \`npm run prebuilds\` again (see docs/maintainers.md).`);
  process.exit(1);
}
const expected = new Set(RELEASE_TARGETS.map((target) => basename(prebuildDir(root, target))));
const strays = readdirSync(join(root, 'prebuilds')).filter((entry) => !expected.has(entry));
if (strays.length > 0) {
  console.error(`netns: not packing what prebuilds/ holds beside the release targets:\n${strays.map((entry) => `  ${join(root, 'prebuilds', entry)}`).join('\n')}\nRemove it (a killed \`npm run prebuilds\` leaves its staging folder), then pack again.`);
  process.exit(1);
}

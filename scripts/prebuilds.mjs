// The layout of the binaries the package ships (prebuildify's, read by
// node-gyp-build at run time): prebuilds/<platform>-<arch>/ holds the addon,
// named with the tags node-gyp-build matches (Node-API, glibc), and the two
// static executables the package runs beside it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Every platform a release tarball carries binaries for. */
export const RELEASE_TARGETS = [
  { platform: 'linux', arch: 'x64', triplet: 'x86_64-linux-gnu', machine: 'x86-64' },
  { platform: 'linux', arch: 'arm64', triplet: 'aarch64-linux-gnu', machine: 'ARM aarch64' },
];

/** Tags node-gyp-build reads from the name: any Node-API runtime, glibc (not musl). */
export const ADDON_FILE = 'netns.napi.glibc.node';
export const HELPER_FILES = ['netns-exec', 'netns-cni-shim'];
/** What node-gyp builds in build/Release, and what each becomes in a prebuild folder. */
export const BUILT_FILES = [
  { built: 'netns.node', shipped: ADDON_FILE, kind: 'addon' },
  ...HELPER_FILES.map((name) => ({ built: name, shipped: name, kind: 'executable' })),
];

export function prebuildDir(root, { platform, arch }) {
  return join(root, 'prebuilds', `${platform}-${arch}`);
}

/** The files a target's prebuild folder lacks (all of them if it is missing). */
export function missingFiles(root, target) {
  const dir = prebuildDir(root, target);
  return BUILT_FILES.map(({ shipped }) => join(dir, shipped)).filter((path) => !existsSync(path));
}

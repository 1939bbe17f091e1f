// The layout of the binaries the package ships (prebuildify's, read by
// node-gyp-build at run time): prebuilds/<platform>-<arch>/ holds the addon,
// named with the tags node-gyp-build matches (Node-API, glibc), and the three
// static executables the package runs beside it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every platform a release tarball carries binaries for. */
export const RELEASE_TARGETS = [
  { platform: 'linux', arch: 'x64', triplet: 'x86_64-linux-gnu', machine: 'x86-64' },
  { platform: 'linux', arch: 'arm64', triplet: 'aarch64-linux-gnu', machine: 'ARM aarch64' },
];

/** Tags node-gyp-build reads from the name: any Node-API runtime, glibc (not musl). */
export const ADDON_FILE = 'netns.napi.glibc.node';
export const HELPER_FILES = ['netns-exec', 'netns-cni-shim', 'netns-sandbox'];
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

/** What the prebuilds are made from: a prebuild older than any of these is stale. */
const SOURCES = ['binding.gyp', 'native', 'scripts/prebuild.mjs', 'scripts/prebuilds.mjs', 'scripts/node-gyp.mjs'];

function newestSource(root) {
  const times = (path) => {
    const stat = statSync(path);
    if (!stat.isDirectory()) return [stat.mtimeMs];
    return readdirSync(path).flatMap((name) => times(join(path, name)));
  };
  return Math.max(...SOURCES.filter((path) => existsSync(join(root, path))).flatMap((path) => times(join(root, path))));
}

/** True when every file of the target's prebuild is there and newer than every source it is made from. */
export function isFresh(root, target) {
  if (missingFiles(root, target).length > 0) return false;
  const dir = prebuildDir(root, target);
  const oldest = Math.min(...BUILT_FILES.map(({ shipped }) => statSync(join(dir, shipped)).mtimeMs));
  return oldest > newestSource(root);
}

/**
 * The newest glibc and libstdc++ symbol versions the prebuilt addon may need:
 * glibc 2.34 (pthread_setname_np) and GCC 12's libstdc++ (GLIBCXX_3.4.30, from
 * std::condition_variable::wait), as Debian 12 builds it. It loads on Debian 12,
 * Ubuntu 22.04 and Fedora 36 or newer; older systems compile at install.
 */
export const RUNTIME_FLOOR = { GLIBC: '2.34', GLIBCXX: '3.4.30' };

/** The newest version of each library that `objdump -T` output asks for, e.g. { GLIBC: '2.34', GLIBCXX: '3.4.30' }. */
export function requiredVersions(dynamicSymbols) {
  const newest = {};
  for (const [, library, version] of dynamicSymbols.matchAll(/\((GLIBC|GLIBCXX)_([0-9.]+)\)/g)) {
    if (compareVersions(version, newest[library] ?? '0') > 0) newest[library] = version;
  }
  return newest;
}

/** Compares dotted version strings numerically ('2.34' > '2.4'). */
export function compareVersions(a, b) {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return 0;
}

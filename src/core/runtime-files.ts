// Where the package finds the files it runs that are not its own JavaScript:
// the addon, the exec and sandbox helpers and the pool worker's entry. Installed, they are
// in the package: the addon where node-gyp-build finds it (build/Release,
// build/Debug, then the shipped prebuilds/<platform>-<arch>/), the executables
// beside that addon, the worker in dist/. A bundle that includes netns has
// taken this JavaScript away from them, so NETNS_RUNTIME_DIR names a folder
// that `netns runtime <dir>` filled; when it is set, every file comes from
// there. NETNS_ADDON_PATH and NETNS_EXEC_HELPER name one file each and win
// over both.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fs } from './builtins.js';
import { ErrorCodes, netnsError, type NetnsError } from './errors.js';
import { VERSION } from './version.js';

export const RUNTIME_DIR_VARIABLE = 'NETNS_RUNTIME_DIR';

// A relative path in these variables means the working directory the program
// started from, even after it changes directory: files are looked up later
// (a pool thread, a spawn), and by pool threads with their own environment.
const startDir = process.cwd();
const fromStart = (path: string): string => resolve(startDir, path);

export interface RuntimeFile {
  /** What messages call it. */
  what: string;
  /** Its name in a runtime folder. */
  name: string;
  /** Where it may be in the installed package (folder `root`), first choice first. */
  installed: (root: string) => string[];
  /** The environment variable that names this one file, if any. */
  variable?: string;
  /** Native: shipped prebuilt for some platforms, compiled by the package's install script on others. */
  builtAtInstall: boolean;
}

/** The C library tag node-gyp-build matches prebuilds by: LIBC if set, else musl on Alpine, else glibc. */
function libcTag(): string {
  return process.env.LIBC || (fs().existsSync('/etc/alpine-release') ? 'musl' : 'glibc');
}

/**
 * Where the installed package's addon may be, in node-gyp-build's order (the
 * install script asks node-gyp-build itself whether a prebuild loads): a build
 * made here first, then the prebuild for this platform, architecture and C
 * library. Not node-gyp-build at run time: the package ships one addon per
 * prebuild folder under a fixed name (scripts/prebuilds.mjs), and loading it
 * would add two modules and a package.json read to every program's first
 * namespace call (a CNI plugin's ADD pays for each);
 * test/unit/package-addon-resolution.test.ts checks that both choose alike.
 */
export function addonCandidates(root: string): string[] {
  return [
    `${root}build/Release/netns.node`,
    `${root}build/Debug/netns.node`,
    `${root}prebuilds/${process.platform}-${process.arch}/netns.napi.${libcTag()}.node`,
  ];
}

// By package root: two copies of the package (one inside the other's
// node_modules) each use their own files.
const chosenAddons = new Map<string, string>();

/**
 * An executable the package builds beside its addon: in the folder of the
 * addon the package loads (build/Release, or a prebuild folder). The choice is
 * remembered once made: each spawn asks where the exec helper is.
 */
export function besideAddon(name: string): (root: string) => string[] {
  return (root) => {
    const candidates = addonCandidates(root);
    let chosen = chosenAddons.get(root);
    if (chosen === undefined) {
      chosen = candidates.find((path) => fs().existsSync(path));
      if (chosen !== undefined) chosenAddons.set(root, chosen);
    }
    return (chosen ? [chosen] : candidates).map((addon) => join(dirname(addon), name));
  };
}

export const ADDON: RuntimeFile = {
  what: 'native addon',
  name: 'netns.node',
  installed: addonCandidates,
  variable: 'NETNS_ADDON_PATH',
  builtAtInstall: true,
};

export const EXEC_HELPER: RuntimeFile = {
  what: 'exec helper',
  name: 'netns-exec',
  installed: besideAddon('netns-exec'),
  variable: 'NETNS_EXEC_HELPER',
  builtAtInstall: true,
};

/** The program that makes a rootless sandbox (native/sandbox_helper.c). */
export const SANDBOX_HELPER: RuntimeFile = {
  what: 'sandbox helper',
  name: 'netns-sandbox',
  installed: besideAddon('netns-sandbox'),
  builtAtInstall: true,
};

/** The worker a runtime folder holds is the self-contained one: the bundle that uses it has no dist/. */
export const WORKER_ENTRY: RuntimeFile = {
  what: 'pool worker entry',
  name: 'netns-worker.mjs',
  installed: (root) => [`${root}dist/run/worker.js`],
  builtAtInstall: false,
};

/** The self-contained worker, as the package ships it (made by scripts/build-worker.mjs). */
export const BUNDLED_WORKER: RuntimeFile = { ...WORKER_ENTRY, installed: (root) => [`${root}dist/netns-worker.mjs`] };

export const RUNTIME_FILES = [ADDON, EXEC_HELPER, SANDBOX_HELPER, BUNDLED_WORKER];

/** Written last into a runtime folder: which netns filled it. */
export const RUNTIME_STAMP = 'netns-runtime.json';

export function runtimeStamp(): string {
  return `${JSON.stringify({ version: VERSION })}\n`;
}

const checkedFolders = new Set<string>();
// What `netns runtime` writes is a few dozen bytes; anything else is not its stamp.
const MAX_STAMP_BYTES = 4096;

/** The version a stamp names, or undefined if it is missing, not a small regular file (a FIFO would block) or not ours. */
function stampedVersion(path: string): unknown {
  try {
    const stat = fs().statSync(path);
    if (!stat.isFile() || stat.size > MAX_STAMP_BYTES) return undefined;
    return (JSON.parse(fs().readFileSync(path, 'utf8')) as { version?: unknown }).version;
  } catch {
    return undefined;
  }
}

// Files of another version speak another protocol (the worker's messages, the
// addon's functions): refuse them by name rather than fail strangely later.
function checkStamp(folder: string): void {
  if (checkedFolders.has(folder)) return;
  const version = stampedVersion(resolve(folder, RUNTIME_STAMP));
  if (version !== VERSION) {
    const found = typeof version === 'string' ? `netns ${version}'s files` : `no ${RUNTIME_STAMP} saying which netns filled it`;
    throw netnsError(
      ErrorCodes.RUNTIME_MISMATCH,
      `the folder ${RUNTIME_DIR_VARIABLE} names (${folder}) holds ${found}, and this program has netns ${VERSION}: ` +
        `fill it again with \`npx netns runtime ${folder}\` from netns ${VERSION}`,
    );
  }
  checkedFolders.add(folder);
}

interface PackageRoot {
  dir: string | null;
  /** Why dir is null. */
  why?: string;
}

let root: PackageRoot | undefined;

/**
 * The installed package's folder, if this code is in it. In a bundle, paths
 * relative to this module point into the user's project, where a file of the
 * same name is not ours; a CommonJS bundle has no import.meta.url at all.
 */
function packageRoot(): PackageRoot {
  root ??= findPackageRoot();
  return root;
}

function findPackageRoot(): PackageRoot {
  const url: unknown = import.meta.url;
  if (typeof url !== 'string' || !url.startsWith('file:')) return { dir: null, why: 'this module has no file URL (a CommonJS bundle)' };
  const dir = fileURLToPath(new URL('../..', url));
  const manifest = `${dir}package.json`;
  try {
    if ((JSON.parse(fs().readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'netns') return { dir };
  } catch {
    // not there, or not JSON: not the installed package either
  }
  return { dir: null, why: `${manifest} is not netns's, so this copy of netns is in a bundle` };
}

/** The installed package's copy of `file`; throws ERR_NETNS_ADDON_MISSING if it has none. */
export function installedFile(file: RuntimeFile): string {
  const { dir, why } = packageRoot();
  if (dir === null) throw missingError(file, [`(nothing: ${why})`], 'the installed package');
  const candidates = file.installed(dir);
  const found = candidates.find((path) => fs().existsSync(path));
  if (found) return found;
  throw missingError(file, candidates, 'the installed package');
}

/** Where `file` is, by the rules above; throws ERR_NETNS_ADDON_MISSING, naming every path tried. */
export function locate(file: RuntimeFile): string {
  const named = file.variable === undefined ? undefined : process.env[file.variable];
  if (named) return existing(file, fromStart(named), `the path ${file.variable} names`);
  const folder = process.env[RUNTIME_DIR_VARIABLE];
  if (folder) {
    const path = existing(file, resolve(fromStart(folder), file.name), `the folder ${RUNTIME_DIR_VARIABLE} names`);
    checkStamp(fromStart(folder));
    return path;
  }
  return installedFile(file);
}

function existing(file: RuntimeFile, path: string, where: string): string {
  if (fs().existsSync(path)) return path;
  throw missingError(file, [path], where);
}

function missingError(file: RuntimeFile, looked: string[], where: string): NetnsError {
  const folder = process.env[RUNTIME_DIR_VARIABLE];
  const lines = [
    `netns cannot find its ${file.what} (${file.name}) in ${where}; looked for:`,
    ...looked.map((path) => `  ${path}`),
    folder ? `${RUNTIME_DIR_VARIABLE} is ${fromStart(folder)}.` : `${RUNTIME_DIR_VARIABLE} is not set.`,
    `If your program is a bundle that includes netns, run \`npx netns runtime <dir>\` where netns is installed and start the program with ${RUNTIME_DIR_VARIABLE}=<dir> (or mark netns external to the bundler).`,
  ];
  if (file.builtAtInstall) {
    lines.push(
      'The package ships it prebuilt for linux-x64 and linux-arm64 with glibc; elsewhere its install script compiles it. ' +
        'If netns was installed by npm 11 or later, npm may have skipped that script: `npm install-scripts approve netns && npm rebuild netns`.',
    );
  }
  return netnsError(ErrorCodes.ADDON_MISSING, lines.join('\n'));
}

/** The variables above as absolute paths, for a pool thread's environment. */
export function absoluteRuntimeVariables(): Record<string, string> {
  const absolute: Record<string, string> = {};
  for (const variable of [RUNTIME_DIR_VARIABLE, ADDON.variable!, EXEC_HELPER.variable!]) {
    const value = process.env[variable];
    if (value) absolute[variable] = fromStart(value);
  }
  return absolute;
}

#!/usr/bin/env node
// The package's install script. Where a shipped prebuild fits this machine
// (prebuilds/<platform>-<arch>/, chosen as node-gyp-build chooses at run time)
// and loads, there is nothing to do. Otherwise the addon and its three helpers
// are compiled with npm's node-gyp, once the tools that needs are known to be
// there: a missing one is named in one message saying what to install, rather
// than a node-gyp stack trace. `npm install --build-from-source` (or
// npm_config_build_from_source=true) always compiles.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNodeGyp } from './node-gyp.mjs';
import { onPath } from './on-path.mjs';
import { HELPER_FILES } from './prebuilds.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function buildFromSourceAsked() {
  const value = process.env.npm_config_build_from_source;
  return value === 'true' || value === 'netns';
}

/** Why no prebuild serves this machine, or undefined when one loads. */
function prebuildProblem() {
  process.env.PREBUILDS_ONLY = '1'; // node-gyp-build reads it when loaded: look at prebuilds/ only, not build/
  let addon;
  try {
    addon = createRequire(join(root, 'package.json'))('node-gyp-build').resolve(root);
  } catch {
    return `no prebuilt binary in the package fits ${platform()}-${arch()} with this C library`;
  }
  const missing = HELPER_FILES.filter((name) => !existsSync(join(dirname(addon), name)));
  if (missing.length > 0) return `the prebuild in ${dirname(addon)} lacks ${missing.join(' and ')}`;
  try {
    process.dlopen({ exports: {} }, addon);
  } catch (error) {
    return `the prebuilt addon ${addon} does not load here (${error.message.split('\n')[0]})`;
  }
  return undefined;
}

// The first word of a compiler variable (CC="ccache gcc" runs ccache).
const commandOf = (value, fallback) => (value?.trim() ? value.trim().split(/\s+/)[0] : fallback);

// A static libc is what the three helpers link against (-static): the compiler knows where libc.a is, if anywhere.
function hasStaticLibc(cc) {
  const result = spawnSync(cc, ['-print-file-name=libc.a'], { encoding: 'utf8' });
  const path = result.stdout?.trim();
  return result.status === 0 && isAbsolute(path ?? '') && existsSync(path);
}

const TOOLS = {
  make: { what: 'make', debian: 'make', fedora: 'make', alpine: 'make' },
  cxx: { what: 'a C++ compiler', debian: 'g++', fedora: 'gcc-c++', alpine: 'g++' },
  cc: { what: 'a C compiler', debian: 'gcc', fedora: 'gcc', alpine: 'gcc' },
  python: { what: 'python3', debian: 'python3', fedora: 'python3', alpine: 'python3' },
  libc: { what: 'a static C library (libc.a)', debian: 'libc6-dev', fedora: 'glibc-static', alpine: 'musl-dev' },
};

function missingTools() {
  const missing = [];
  if (!onPath(process.env.MAKE || 'make')) missing.push(TOOLS.make);
  const cxx = commandOf(process.env.CXX, 'g++');
  if (!onPath(cxx)) missing.push({ ...TOOLS.cxx, what: `${TOOLS.cxx.what} (${cxx})` });
  const cc = commandOf(process.env.CC, 'cc');
  const hasCc = onPath(cc);
  if (!hasCc) missing.push({ ...TOOLS.cc, what: `${TOOLS.cc.what} (${cc})` });
  const python = [process.env.npm_config_python, process.env.PYTHON].find(Boolean);
  if (!(python ? onPath(python) : onPath('python3') || onPath('python'))) missing.push(TOOLS.python);
  // Without a C compiler libc.a cannot be looked for: name its package too, installing it is harmless.
  if (!hasCc || !hasStaticLibc(cc)) missing.push(TOOLS.libc);
  return missing;
}

function refuse(why, missing) {
  const packages = (distro) => [...new Set(missing.map((tool) => tool[distro]))].join(' ');
  console.error(
    [
      `netns: ${why}, so netns's native addon must be compiled here, and this machine lacks ${missing.map((tool) => tool.what).join(', ')}.`,
      `  Debian/Ubuntu: sudo apt-get install ${packages('debian')}`,
      `  Fedora/RHEL:   sudo dnf install ${packages('fedora')}${missing.includes(TOOLS.libc) ? ' (RHEL: glibc-static is in the CRB repository)' : ''}`,
      // Alpine's kernel headers (<linux/netlink.h>...) are a package of their own, which is not checked for.
      `  Alpine:        sudo apk add ${packages('alpine')} linux-headers`,
      'Then run the same npm install again (npm removed netns when this script failed).',
    ].join('\n'),
  );
  process.exit(1);
}

const why = buildFromSourceAsked() ? 'npm was asked to build from source' : prebuildProblem();
if (why !== undefined) {
  const missing = missingTools();
  if (missing.length > 0) refuse(why, missing);
  console.error(`netns: ${why}; compiling it with node-gyp`);
  process.exitCode = runNodeGyp(['rebuild'], { cwd: root });
}

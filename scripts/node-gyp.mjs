// Runs node-gyp the way every build of this package does (install script,
// `npm run build`, `npm run prebuilds`): npm's own copy, with Node's headers
// taken from beside the running node when they are there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

// npm names its bundled node-gyp in every script's environment; outside npm,
// the one installed with the running node's npm.
function nodeGypScript() {
  const named = process.env.npm_config_node_gyp;
  if (named && existsSync(named)) return named;
  const beside = join(dirname(dirname(process.execPath)), 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  return existsSync(beside) ? beside : undefined;
}

/**
 * --nodedir=<prefix of the running node> when its headers are there (Debian's
 * /usr, nvm, the official tarballs all have include/node/common.gypi), so a
 * build needs no download; else nothing, and node-gyp downloads them. A nodedir
 * the user configured for npm (npm_config_nodedir) wins.
 */
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, 'include', 'node', 'common.gypi')) ? [`--nodedir=${prefix}`] : [];
}

/** Runs node-gyp with `args` (and Node's headers, see nodedirArgs) in `cwd`, output shown; returns its exit status. */
export function runNodeGyp(args, { cwd, env = process.env } = {}) {
  const script = nodeGypScript();
  const [command, prefix] = script ? [process.execPath, [script]] : ['node-gyp', []];
  const result = spawnSync(command, [...prefix, ...args, ...nodedirArgs()], { cwd, env, stdio: 'inherit' });
  if (result.error) {
    console.error(`netns: could not run node-gyp: ${result.error.message}`);
    return 1;
  }
  return result.status ?? 1;
}

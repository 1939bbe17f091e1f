// Builds the cni-ptp example as one executable, by docs/cni-packaging.md's
// recipe (its sea-runtime.mjs and build lines), for the cni section to time
// beside the same plugin run by `node` as ES modules.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** The page's sea-runtime.mjs block, as a reader would copy it. */
function seaRuntimeSource() {
  const page = readFileSync(join(root, 'docs', 'cni-packaging.md'), 'utf8');
  const block = page.match(/<!-- not run: a plugin's first import[^\n]*-->\n```js\n([\s\S]*?)\n```/);
  if (!block) throw new Error('docs/cni-packaging.md no longer has its sea-runtime.mjs block');
  return block[1];
}

/** Returns the executable's path; throws if a step fails. */
export function buildPtpExecutable(pluginMain) {
  const dir = mkdtempSync(join(tmpdir(), 'netns-bench-sea-'));
  mkdirSync(join(dir, 'out'));
  execFileSync(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'runtime', join(dir, 'netns-runtime')], { stdio: 'ignore' });
  writeFileSync(join(dir, 'sea-runtime.mjs'), seaRuntimeSource());
  writeFileSync(join(dir, 'plugin.mjs'), `import './sea-runtime.mjs';\nimport ${JSON.stringify(pluginMain)};\n`);
  execFileSync(bin('esbuild'), ['plugin.mjs', '--bundle', '--platform=node', '--format=cjs', '--outfile=out/plugin.cjs', '--log-override:empty-import-meta=silent', '--log-level=error'], { cwd: dir });
  const assets = Object.fromEntries(['netns.node', 'netns-exec', 'netns-worker.mjs', 'netns-runtime.json'].map((name) => [name, `netns-runtime/${name}`]));
  writeFileSync(join(dir, 'sea-config.json'), JSON.stringify({ main: 'out/plugin.cjs', output: 'out/plugin.blob', disableExperimentalSEAWarning: true, useCodeCache: true, assets }));
  execFileSync(process.execPath, ['--experimental-sea-config', 'sea-config.json'], { cwd: dir, stdio: 'ignore' });
  const executable = join(dir, 'out', 'cni-ptp');
  copyFileSync(process.execPath, executable);
  execFileSync(bin('postject'), [executable, 'NODE_SEA_BLOB', 'out/plugin.blob', '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], { cwd: dir, stdio: 'ignore' });
  return executable;
}

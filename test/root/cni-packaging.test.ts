// docs/cni-packaging.md's recipe, followed in a project that installed netns:
// the page's sea-runtime.mjs, sea-config.json and build lines make one
// executable. Moved away from the project, it answers VERSION and, for ADD,
// uses the addon, the exec helper and a withNetNS worker in the container's
// namespace, from the runtime files it carries.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { createConsumerProject, type ConsumerProject } from '../helpers/consumer-project.js';
import { packageRoot } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const page = readFileSync(join(packageRoot, 'docs', 'cni-packaging.md'), 'utf8');
const blocks = [...page.matchAll(/<!-- not run: [^\n]*cni-packaging\.test\.ts[^\n]*-->\n```(\w+)\n([\s\S]*?)\n```/g)];
const blockOf = (lang: string): string => blocks.find((block) => block[1] === lang)?.[2] ?? '';

const PLUGIN = `import './sea-runtime.mjs';
import { pluginMain } from 'netns/cni';
import { NetNS, withNetNS } from 'netns';

async function add({ netns }) {
  const ns = NetNS.open(netns);
  try {
    const byWorker = await withNetNS(ns, () => require('node:fs').statSync('/proc/thread-self/ns/net').ino);
    const { stdout } = await ns.execFile('stat', ['-L', '-c', '%i', '/proc/self/ns/net']);
    process.stderr.write('SEEN ' + JSON.stringify({ byWorker, byHelper: Number(stdout) }) + '\\n');
  } finally {
    ns.close();
  }
  return { cniVersion: '1.0.0', interfaces: [], ips: [] };
}
const nothing = () => {};
pluginMain({ add, del: nothing, check: nothing }, { versions: ['1.0.0', '1.1.0'] });
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// As a runtime runs a plugin: only CNI_* (and PATH), the configuration on stdin.
function runPlugin(file: string, env: Record<string, string>, input: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(file, [], { cwd: '/', env: { PATH: process.env.PATH!, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

const SEA_PARENT = '/run/netns-sea';
const config = JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'my-plugin' });

describe.skipIf(!privileged)('a CNI plugin packaged as docs/cni-packaging.md says', () => {
  let project: ConsumerProject;
  let binDir: string;
  let plugin: string;
  let ns: NetNS;
  const parentExisted = existsSync(SEA_PARENT);
  const foldersBefore = new Set(parentExisted ? readdirSync(SEA_PARENT) : []);

  beforeAll(async () => {
    project = await createConsumerProject();
    // npx finds them in the project, as it would after `npm install -D esbuild postject`.
    for (const tool of ['esbuild', 'postject']) {
      symlinkSync(join(packageRoot, 'node_modules', tool), join(project.dir, 'node_modules', tool));
      symlinkSync(join(packageRoot, 'node_modules', '.bin', tool), join(project.dir, 'node_modules', '.bin', tool));
    }
    project.write('sea-runtime.mjs', `${blockOf('js')}\n`);
    project.write('sea-config.json', `${blockOf('json')}\n`);
    project.write('plugin.mjs', PLUGIN);
    const built = await project.run('bash', ['-euo', 'pipefail', '-c', blockOf('sh')], {
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    });
    expect(built.code, built.stderr + built.stdout).toBe(0);
    // The bin directory holds the executable alone: nothing of the project is reachable from it.
    binDir = mkdtempSync(join(tmpdir(), 'nsnat-cni-bin-'));
    plugin = join(binDir, 'my-plugin');
    renameSync(join(project.dir, 'out', 'my-plugin'), plugin);
    ns = await NetNS.create();
  }, 180_000);

  afterAll(() => {
    ns?.close();
    project?.remove();
    if (binDir) rmSync(binDir, { recursive: true, force: true });
    if (!parentExisted) rmSync(SEA_PARENT, { recursive: true, force: true });
    else for (const folder of readdirSync(SEA_PARENT)) if (!foldersBefore.has(folder)) rmSync(join(SEA_PARENT, folder), { recursive: true, force: true });
  });

  it('has the three blocks the recipe needs', () => {
    expect(blocks.map((block) => block[1])).toEqual(['js', 'json', 'sh']);
  });

  it('answers VERSION', async () => {
    const out = await runPlugin(plugin, { CNI_COMMAND: 'VERSION' }, config);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(out.stdout)).toMatchObject({ supportedVersions: ['1.0.0', '1.1.0'] });
  });

  it('runs ADD with the addon, the exec helper and a pool worker, from a root-only folder it wrote', async () => {
    const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: ns.path, CNI_IFNAME: 'eth0', CNI_PATH: binDir };
    const out = await runPlugin(plugin, env, config);
    expect(out, out.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(out.stdout)).toEqual({ cniVersion: '1.0.0', interfaces: [], ips: [] });
    const seen = JSON.parse(/^SEEN (.*)$/m.exec(out.stderr)?.[1] ?? 'null');
    expect(seen).toEqual({ byWorker: ns.inode, byHelper: ns.inode });
    // The folder is named by the files' hash, as sea-runtime.mjs names it (an earlier build of the same files may have written it).
    const hash = createHash('sha256');
    for (const name of ['netns.node', 'netns-exec', 'netns-worker.mjs', 'netns-runtime.json']) hash.update(readFileSync(join(project.dir, 'netns-runtime', name)));
    const folder = join(SEA_PARENT, hash.digest('hex').slice(0, 32));
    expect(statSync(folder).mode & 0o077).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(['netns-exec', 'netns-runtime.json', 'netns-worker.mjs', 'netns.node']);
    expect(readdirSync(SEA_PARENT).filter((name) => name.startsWith('.'))).toEqual([]); // no staging folder left
  });
});

// docs/cni-packaging.md's bundle recipe, followed in a project that installed
// netns from its tarball: the page's #! line and build lines make one CommonJS
// file. Copied with its runtime folder into a bin directory away from the
// project (reached through a symbolic link, as some installs do), it answers
// VERSION and, for ADD, delegates to a plugin found in CNI_PATH and runs a
// command through the exec helper in the container's namespace.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { createConsumerProject, type ConsumerProject } from '../helpers/consumer-project.js';
import { packageRoot } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const page = readFileSync(join(packageRoot, 'docs', 'cni-packaging.md'), 'utf8');
const blocks = [...page.matchAll(/<!-- not run: [^\n]*cni-bundle-recipe\.test\.ts[^\n]*-->\n```(\w+)\n([\s\S]*?)\n```/g)];
const blockOf = (lang: string): string => blocks.find((block) => block[1] === lang)?.[2] ?? '';

// ADD asks the delegate named `echo` (a sh script in CNI_PATH) and reports the container's namespace as the exec helper saw it.
const PLUGIN = `import { delegateAdd, pluginMain } from 'netns/cni';
import { NetNS } from 'netns';

async function add({ netns, stdin }) {
  const result = await delegateAdd('echo', stdin);
  const ns = NetNS.open(netns);
  try {
    const { stdout } = await ns.execFile('stat', ['-L', '-c', '%i', '/proc/self/ns/net']);
    process.stderr.write('SEEN ' + Number(stdout) + '\\n');
  } finally {
    ns.close();
  }
  return result;
}
const nothing = () => {};
pluginMain({ add, del: nothing, check: nothing }, { versions: ['1.0.0', '1.1.0'] });
`;

const RESULT = { cniVersion: '1.0.0', interfaces: [], ips: [{ address: '10.9.0.2/24' }] };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// As a runtime runs a plugin: only CNI_* (and PATH), the configuration on stdin.
function runPlugin(file: string, env: Record<string, string>, input: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(file, [], { cwd: '/', env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

const config = JSON.stringify({ cniVersion: '1.0.0', name: 'net1', type: 'my-plugin' });

describe.skipIf(!privileged)('a CNI plugin bundled as docs/cni-packaging.md says', () => {
  let project: ConsumerProject;
  let binDir: string;
  let plugin: string;
  let ns: NetNS;

  beforeAll(async () => {
    project = await createConsumerProject();
    symlinkSync(join(packageRoot, 'node_modules', 'esbuild'), join(project.dir, 'node_modules', 'esbuild'));
    symlinkSync(join(packageRoot, 'node_modules', '.bin', 'esbuild'), join(project.dir, 'node_modules', '.bin', 'esbuild'));
    project.write('plugin.mjs', `${blockOf('js')}\n${PLUGIN}`);
    const built = await project.run('bash', ['-euo', 'pipefail', '-c', blockOf('sh')], { env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}` } });
    expect(built.code, built.stderr + built.stdout).toBe(0);
    // The bin directory holds the file and its runtime folder: nothing of the project is reachable from it.
    binDir = mkdtempSync(join(tmpdir(), 'nsbndl-cni-bin-'));
    cpSync(join(project.dir, 'out', 'my-plugin'), join(binDir, 'my-plugin.real'));
    cpSync(join(project.dir, 'out', 'netns-runtime'), join(binDir, 'netns-runtime'), { recursive: true });
    symlinkSync(join(binDir, 'my-plugin.real'), join(binDir, 'my-plugin'));
    writeFileSync(join(binDir, 'echo'), `#!/bin/sh\ncat > /dev/null\necho '${JSON.stringify(RESULT)}'\n`, { mode: 0o755 });
    plugin = join(binDir, 'my-plugin');
    ns = await NetNS.create();
  }, 180_000);

  afterAll(() => {
    ns?.close();
    project?.remove();
    if (binDir) rmSync(binDir, { recursive: true, force: true });
  });

  it('has the two blocks the recipe needs', () => {
    expect(blocks.map((block) => block[1])).toEqual(['js', 'sh']);
  });

  it('answers VERSION', async () => {
    const out = await runPlugin(plugin, { CNI_COMMAND: 'VERSION' }, config);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(out.stdout)).toMatchObject({ supportedVersions: ['1.0.0', '1.1.0'] });
  });

  it('runs ADD with a delegate from CNI_PATH and the exec helper from its runtime folder', async () => {
    const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: ns.path, CNI_IFNAME: 'eth0', CNI_PATH: binDir };
    const out = await runPlugin(plugin, env, config);
    expect(out, out.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(out.stdout)).toEqual(RESULT);
    expect(/^SEEN (\d+)$/m.exec(out.stderr)?.[1]).toBe(String(ns.inode));
  });
});

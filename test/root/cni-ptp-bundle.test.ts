// The example as it ships (examples/cni-ptp/dist/cni-ptp.cjs, one CommonJS
// file) loads only what a command needs: a runtime starts it once per command,
// and what a command loads is most of what it costs. A preload records, as the
// process exits, the JavaScript files it loaded, the built-in modules (Node's
// own list) and the addons it opened.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { NetNS } from '../../dist/index.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const BUNDLE = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp.cjs', import.meta.url));
const GO_PLUGINS = '/usr/lib/cni';

interface Loaded {
  files: string[];
  builtins: string[];
  addons: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'cni-ptp-bundle-'));
const preload = join(dir, 'record-loads.cjs');
writeFileSync(
  preload,
  `const addons = [];
const dlopen = process.dlopen;
process.dlopen = function (module, file, ...rest) { addons.push(file); return dlopen.call(this, module, file, ...rest); };
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
  const files = Object.keys(require.cache).filter((file) => file !== __filename);
  require('node:fs').writeFileSync(process.env.LOADS_FILE, JSON.stringify({ files, builtins, addons }));
});
`,
);

/** Runs the bundle in `host` for `command`; what it loaded, and its stdout. */
async function loadsOf(host: NetNS, command: string, container: NetNS | undefined): Promise<{ loaded: Loaded; stdout: string }> {
  const loadsFile = join(dir, `loads-${command}.json`);
  const env = {
    PATH: process.env.PATH ?? '',
    LOADS_FILE: loadsFile,
    CNI_COMMAND: command,
    CNI_CONTAINERID: 'bundle-1',
    CNI_NETNS: container?.path ?? '',
    CNI_IFNAME: 'eth0',
    CNI_PATH: GO_PLUGINS,
  };
  const config = { cniVersion: '1.0.0', name: 'bundle-net', type: 'cni-ptp', dataDir: join(dir, 'records'), ipam: { type: 'host-local', subnet: '10.66.0.0/24', dataDir: join(dir, 'ipam') } };
  const { stdout } = await host.execFile(process.execPath, ['-r', preload, BUNDLE], { env, input: JSON.stringify(config) });
  return { loaded: JSON.parse(readFileSync(loadsFile, 'utf8')) as Loaded, stdout };
}

// Built-ins a command has no use for: the worker pool's threads, Node's process spawning
// (delegates start from the addon), file watching, sockets other than netlink's.
const NEVER = ['worker_threads', 'child_process', 'internal/child_process', 'fs/promises', 'dgram', 'internal/fs/watchers'];
// Nor these, each a few ms that an ADD once paid for little (issue 33 item 6): node:crypto for
// hashes and random names (@noble/hashes, /dev/urandom), node:net for isIP and for stdin and
// stdout as pipes (read and written through their descriptors), node:stream for the netlink
// watcher's base class (taken when a watcher is made), node:perf_hooks for one timestamp.
const NOT_FOR_ADD = ['crypto', 'net', 'stream', 'perf_hooks'];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!privileged)('the bundled cni-ptp loads only what a command uses', () => {
  const scratch = scratchNamespaces('cnibndl');
  afterEach(() => scratch.removeAll());

  it('VERSION: its one file, no addon, no crypto, net, stream or perf_hooks, no worker pool or child_process', async () => {
    const host = await scratch.create();
    const { loaded, stdout } = await loadsOf(host, 'VERSION', undefined);
    expect(JSON.parse(stdout)).toMatchObject({ cniVersion: '1.1.0' });
    expect(loaded.files).toEqual([BUNDLE]);
    expect(loaded.addons).toEqual([]);
    expect(loaded.builtins.filter((name) => [...NEVER, ...NOT_FOR_ADD].includes(name))).toEqual([]);
  });

  it('ADD and DEL: its one file and the addon, no worker pool, child_process, crypto, net, stream or perf_hooks', async () => {
    const [host, container] = [await scratch.create(), await scratch.create()];
    const add = await loadsOf(host, 'ADD', container);
    expect(JSON.parse(add.stdout)).toMatchObject({ ips: [expect.objectContaining({ address: '10.66.0.2/24' })] });
    const del = await loadsOf(host, 'DEL', container);
    for (const { loaded } of [add, del]) {
      expect(loaded.files).toEqual([BUNDLE]);
      expect(loaded.addons).toEqual([fileURLToPath(new URL('../../build/Release/netns.node', import.meta.url))]);
      expect(loaded.builtins.filter((name) => [...NEVER, ...NOT_FOR_ADD].includes(name))).toEqual([]);
    }
  });
});

// The lab CLI's state files as other processes meet them: written through a
// temporary file of a name no one can guess (a symlink planted at the old
// predictable one is never followed), and read back refusing any file that
// is not a lab's, so `down` deletes nothing by the names a damaged file holds.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectLab, saveLab, type StoredLab } from '../../dist/cli/lab-state.js';

let dir: string;
const plan = { prefix: 'nslab-', ipv6: false, nodes: [{ key: 'a', kind: 'host' }], segments: [], links: [], routes: {} };
const lab = (names: Record<string, string>): StoredLab =>
  ({ name: 'demo', file: 'demo.yaml', building: false, state: { plan, names, impairments: [], down: [], partitions: [], nextPartition: 1 }, identities: { a: { dev: 4, inode: 4026532000, made: '1796223851589511391' } } }) as unknown as StoredLab;

describe('netns lab state files', () => {
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-lab-state-'));
    process.env.NETNS_LAB_DIR = dir;
  });
  afterEach(() => {
    delete process.env.NETNS_LAB_DIR;
    rmSync(dir, { recursive: true, force: true });
  });

  it('never writes through a symlink planted where the temporary file used to go', async () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'keep me\n');
    symlinkSync(victim, join(dir, `demo.json.${process.pid}.tmp`));
    saveLab(lab({ a: 'nslab-demo.a' }));
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(lstatSync(join(dir, 'demo.json')).isFile()).toBe(true);
    expect(await inspectLab('demo')).toMatchObject({ name: 'demo', state: { names: { a: 'nslab-demo.a' } } });
    expect(readdirSync(dir).sort()).toEqual(['demo.json', `demo.json.${process.pid}.tmp`, 'victim']);
  });

  it('finds a file that is not a lab damaged, saying why', async () => {
    const damaged = (text: string): Promise<unknown> => {
      writeFileSync(join(dir, 'demo.json'), text);
      return inspectLab('demo');
    };
    expect(await damaged('{"name":"demo"}')).toMatchObject({ name: 'demo', damaged: expect.stringContaining('file must be a string') });
    expect(await damaged('[')).toMatchObject({ damaged: expect.stringContaining('not JSON') });
    expect(await damaged('{"name":"demo","file":"x","building":false,"state":{"names":{"a":"victim"}}}')).toMatchObject({ damaged: expect.stringContaining('plan') });
    // well-formed, but naming a namespace this lab never makes
    expect(await damaged(JSON.stringify(lab({ a: 'victim' })))).toMatchObject({ damaged: 'namespace "victim" (node a) is not one lab demo makes' });
    const { identities: _, ...unidentified } = lab({ a: 'nslab-demo.a' });
    expect(await damaged(JSON.stringify(unidentified))).toMatchObject({ damaged: expect.stringContaining('identities') });
    // a node's dirs, which the exec helper lays over its paths: an overlay option or a relative path smuggled in is refused
    const withDirs = (dirs: unknown): string => {
      const stored = lab({ a: 'nslab-demo.a' });
      return JSON.stringify({ ...stored, state: { ...stored.state, plan: { ...plan, nodes: [{ key: 'a', kind: 'host', dirs }] } } });
    };
    expect(await damaged(withDirs({ '/var/log': 'empty' }))).not.toHaveProperty('damaged');
    expect(await damaged(withDirs({ '/etc,upperdir=/tmp/x': 'overlay' }))).toMatchObject({ damaged: expect.stringContaining('overlayfs') });
    expect(await damaged(withDirs({ '/var/log': 'relative' }))).toMatchObject({ damaged: expect.stringContaining('absolute path') });
    expect(await damaged(withDirs(['/var/log']))).toMatchObject({ damaged: expect.stringContaining('dirs must be an object') });
    // the way out: the machine's end is an interface name, the node one of the lab's
    const withNat = (nat: Record<string, unknown>): string => {
      const stored = lab({ a: 'nslab-demo.a' });
      const fields = { node: 'a', subnet: '100.64.0.0/30', iface: 'uplink', routerAddress: '100.64.0.2/30', machineIface: 'nslab00000000', machineAddress: '100.64.0.1/30', ...nat };
      return JSON.stringify({ ...stored, state: { ...stored.state, plan: { ...plan, nat: fields } } });
    };
    expect(await damaged(withNat({}))).not.toHaveProperty('damaged');
    expect(await damaged(withNat({ machineIface: 'a/b' }))).toMatchObject({ damaged: expect.stringContaining("machine interface") });
    expect(await damaged(withNat({ node: 'ghost' }))).toMatchObject({ damaged: expect.stringContaining('unknown node') });
  });
});

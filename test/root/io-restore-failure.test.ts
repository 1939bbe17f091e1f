// An I/O thread whose restore fails must not run another job: it settles the
// job it ran, leaves, is counted and replaced, and every later job runs in the
// namespace it names. No JavaScript runs on an I/O thread, so the failure is
// provoked by a preloaded setns that refuses the first return home.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';
import { ip, nsName, scratchNamespaces } from '../helpers/scratch-namespaces.js';

const fixture = new URL('../fixtures/fail-home-setns.c', import.meta.url).pathname;

/** Reads each namespace's /proc/net/dev through I/O jobs; the first job's restore fails. */
const script = (paths: string[]): string => `
  const { NetNS, ioStats } = await import(${JSON.stringify(distUrl('index.js'))});
  const warnings = [];
  process.on('warning', (warning) => warnings.push(warning.code));
  const [a, b] = ${JSON.stringify(paths)}.map((path) => NetNS.open(path));
  const devices = async (ns) => (await ns.readFile('/proc/thread-self/net/dev')).toString();
  const first = await devices(a);
  const afterFirst = ioStats();
  const later = await Promise.all(Array.from({ length: 20 }, (_, i) => devices(i % 2 ? b : a)));
  console.log(JSON.stringify({ first, afterFirst, later, warnings }));
`;

describe.skipIf(!privileged)('an I/O thread whose restore fails', () => {
  const scratch = scratchNamespaces('nsiorf');
  let dir: string;
  let preload: string;
  let a: NetNS;
  let b: NetNS;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netns-iorf-'));
    preload = join(dir, 'fail-home-setns.so');
    execFileSync('cc', ['-shared', '-fPIC', '-o', preload, fixture, '-ldl']);
    [a, b] = [await scratch.create(), await scratch.create()];
    ip(a, 'link', 'add', 'only-in-a', 'type', 'veth', 'peer', 'name', 'only-in-a-p');
    ip(b, 'link', 'add', 'only-in-b', 'type', 'veth', 'peer', 'name', 'only-in-b-p');
  });

  afterAll(async () => {
    await scratch.removeAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('settles its job, is discarded and replaced, and later jobs run where they should', async () => {
    const result = await runNodeScript(script([a.path, b.path]), { prefix: ['env', `LD_PRELOAD=${preload}`, 'FAIL_HOME_SETNS=1'] });
    expect(result, result.stderr).toMatchObject({ code: 0, signal: null });
    const { first, afterFirst, later, warnings } = JSON.parse(result.stdout);
    expect(first).toContain('only-in-a');
    expect(afterFirst.threadsDiscarded).toBe(1);
    expect(warnings).toEqual(['NETNS_RESTORE_FAILED']);
    later.forEach((devices: string, i: number) => {
      expect(devices, `job ${i} in ${i % 2 ? nsName(b) : nsName(a)}`).toContain(i % 2 ? 'only-in-b' : 'only-in-a');
      expect(devices).not.toContain(i % 2 ? 'only-in-a' : 'only-in-b');
    });
  });
});

// sweep's stop of FRR daemons a killed lab left (killOrphanedDaemons): only a
// process in the swept namespace whose command line reads its configuration
// from a lab's daemon directory (<tmpdir>/netns-frr-XXXXXX/<router>/<file>)
// is killed, and that directory removed once its daemons are gone; any other
// process there, or a directory of another shape, is left. The stand-in
// daemons are shells whose arguments look like a daemon's; TMPDIR is this
// test's own folder for the call, so no process of anyone else can match.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FRR_DIR_PREFIX, killOrphanedDaemons } from '../../dist/testing/lab/frr-orphans.js';

const own = mkdtempSync(join(tmpdir(), 'netns-frr-orphans-'));
const savedTmpdir = process.env.TMPDIR;
const children: ChildProcess[] = [];
afterEach(() => {
  process.env.TMPDIR = savedTmpdir;
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => rmSync(own, { recursive: true, force: true }));

/** A process whose command line ends `-f <config>`, as zebra's does, running until killed. */
function daemonLike(config: string): Promise<ChildProcess> {
  const child = spawn('sh', ['-c', 'echo up; while :; do sleep 1; done', 'zebra', '-f', config], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  return new Promise((resolve) => child.stdout!.once('data', () => resolve(child)));
}
const ended = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

describe('killOrphanedDaemons', () => {
  it("kills the daemons reading a lab's directory in the swept namespace, and removes the directory", async () => {
    const labDir = join(own, `${FRR_DIR_PREFIX}abc123`);
    mkdirSync(join(labDir, 'r1'), { recursive: true });
    writeFileSync(join(labDir, 'r1', 'zebra.conf'), '');
    const daemon = await daemonLike(join(labDir, 'r1', 'zebra.conf'));
    const bystanders = await Promise.all([
      daemonLike(join(own, 'other-dir', 'r1', 'zebra.conf')), // not a lab's directory
      daemonLike(join(own, `${FRR_DIR_PREFIX}abc123`, 'zebra.conf')), // not inside a router's folder
      daemonLike(join(own, 'nested', `${FRR_DIR_PREFIX}x`, 'r1', 'zebra.conf')), // not directly in the temporary folder
    ]);
    process.env.TMPDIR = own;
    await killOrphanedDaemons(['/proc/self/ns/net']);
    await ended(daemon);
    expect(daemon.signalCode).toBe('SIGKILL');
    expect(existsSync(labDir)).toBe(false);
    for (const bystander of bystanders) expect(bystander.exitCode === null && bystander.signalCode === null).toBe(true);
  });

  it('leaves every process of a namespace it cannot find, and of a path that is gone', async () => {
    const labDir = join(own, `${FRR_DIR_PREFIX}def456`);
    mkdirSync(join(labDir, 'r2'), { recursive: true });
    const daemon = await daemonLike(join(labDir, 'r2', 'ospfd.conf'));
    process.env.TMPDIR = own;
    await killOrphanedDaemons([join(own, 'no-such-namespace')]);
    expect(daemon.exitCode === null && daemon.signalCode === null).toBe(true);
    expect(existsSync(labDir)).toBe(true);
  });
});

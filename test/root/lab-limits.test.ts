// A lab past a limit of the kernel or the process is refused before anything
// is made, with ERR_NETNS_LAB_TOO_BIG naming the limit and how to split; a
// large lab within them builds and goes.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, watch } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLab } from '../../dist/testing.js';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const prefix = `nslabl${randomBytes(2).toString('hex')}-`;
const leftovers = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((name) => name.startsWith(prefix)) : []);

/** `count` hosts h0, h1, … spread in turn over the switches given, which are chained s0-s1-…: one subnet. */
function hostsOn(count: number, switches: number, subnet: string) {
  const hosts = Object.fromEntries(Array.from({ length: count }, (_, i) => [`h${i}`, {}]));
  const switchKeys = Array.from({ length: switches }, (_, i) => `s${i}`);
  const links: [string, string][] = [
    ...switchKeys.slice(1).map((key, i) => [switchKeys[i]!, key] as [string, string]),
    ...Object.keys(hosts).map((key, i) => [key, switchKeys[i % switches]!] as [string, string]),
  ];
  return { prefix, ipv6: false, hosts, switches: Object.fromEntries(switchKeys.map((key, i) => [key, i === 0 ? { subnet } : {}])), links };
}

/** Runs createLab(spec) in a node child under `prlimit --nofile=soft:hard`; prints its outcome as JSON. */
async function createLabUnder(limit: string, spec: object): Promise<{ built?: number; code?: string; message?: string }> {
  const script = `
    const { createLab } = await import(${JSON.stringify(distUrl('testing.js'))});
    try {
      const lab = await createLab(${JSON.stringify(spec)});
      const built = Object.keys(lab.names).length;
      await lab.delete();
      console.log(JSON.stringify({ built }));
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }));
    }`;
  const result = await runNodeScript(script, { prefix: ['prlimit', `--nofile=${limit}`, '--'], killAfterMs: 300_000 });
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as { built?: number; code?: string; message?: string };
}

/** Runs `make` while watching the run directory: the names of ours that appeared meanwhile. */
async function namesMadeDuring(make: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const watcher = watch('/run/netns', (_, name) => {
    if (name?.startsWith(prefix)) seen.push(name);
  });
  try {
    await make();
  } finally {
    watcher.close();
  }
  return seen;
}

describe.skipIf(!privileged)('lab limits', () => {
  afterAll(() => {
    for (const name of leftovers()) execFileSync('ip', ['netns', 'del', name]);
  });

  it('refuses 1,100 hosts on one switch before making anything: a bridge takes 1,023 ports', async () => {
    let refusal: unknown;
    const made = await namesMadeDuring(() => createLab(hostsOn(1100, 1, '10.0.0.0/21')).catch((error: unknown) => (refusal = error)));
    expect(refusal).toMatchObject({ code: 'ERR_NETNS_LAB_TOO_BIG', message: expect.stringMatching(/switch s0 has 1100 links; a Linux bridge takes at most 1023 ports: spread them over 2 or more switches/) });
    expect(made).toEqual([]);
  });

  it('refuses, before making anything, a lab that would need more descriptors than the hard limit lets it open', async () => {
    let outcome: Awaited<ReturnType<typeof createLabUnder>> = {};
    const made = await namesMadeDuring(async () => (outcome = await createLabUnder('256:256', hostsOn(200, 1, '10.0.0.0/23'))));
    expect(outcome).toMatchObject({ code: 'ERR_NETNS_LAB_TOO_BIG', message: expect.stringMatching(/201 nodes hold 402 descriptors .* limit of 256 open files .* split the lab into labs of at most \d+ nodes/) });
    expect(made).toEqual([]);
  });

  it('builds and tears down 1,000 hosts on 4 switches under a soft limit of 1,024 open files (node raises it to the hard one)', async () => {
    expect(await createLabUnder('1024:4096', hostsOn(1000, 4, '10.0.0.0/22'))).toEqual({ built: 1004 });
    expect(leftovers()).toEqual([]);
  });
});

// What the `netns` command adds to ip netns (cli-ip-parity.test.ts holds what
// it shares with it): --run-dir, the fields of -j list, --json after identify
// and pids, --version, help, and that every verb works from the installed bin.
// Each case runs in a world of its own (ip-world.ts), so nothing it names
// reaches the system's /run/netns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../dist/core/version.js';
import { CLI_PATH } from '../helpers/cli-path.js';
import { IpWorld } from '../helpers/ip-world.js';
import { privileged } from '../helpers/privileges.js';

const NETNS = { NETNS: `${process.execPath} ${CLI_PATH}` };

describe.skipIf(!privileged)('the netns command', () => {
  let world: IpWorld;
  const scratch: string[] = [];
  const run = (script: string) => world.run(script, NETNS);

  beforeEach(async () => {
    world = await IpWorld.open();
  });

  afterEach(async () => {
    await world.close(); // its mounts (a --run-dir made a mount point too) end with it
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps namespaces of --run-dir out of /run/netns, and finds them there for every verb', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-cli-rundir-'));
    scratch.push(dir);
    const at = `$NETNS --run-dir ${dir}`;
    // Listed in directory order, as ip lists: the same as `ls -f` gives.
    expect(await run(`${at} add blue && ${at} add red && [ "$(${at} list)" = "$(ls -f ${dir} | grep -v '^\\.')" ] && ${at} list | sort`)).toMatchObject({
      status: 0,
      stdout: 'blue\nred\n',
      stderr: '',
    });
    expect(await run('ip netns list; $NETNS list')).toMatchObject({ status: 0, stdout: '' });
    expect(await run(`${at} set blue 3 && ${at} -j list`)).toMatchObject({ status: 0 });
    const listed = JSON.parse((await run(`${at} -j list`)).stdout) as { name: string; id?: number; path: string; inode: number; alive: boolean }[];
    expect(listed.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'blue', id: 3, path: `${dir}/blue`, inode: expect.any(Number), alive: true },
      { name: 'red', path: `${dir}/red`, inode: expect.any(Number), alive: true },
    ]);
    expect(await run(`${at} exec blue ${at} identify --json`)).toMatchObject({ status: 0, stdout: '["blue"]\n' });
    expect((await run(`${at} exec red readlink /proc/self/ns/net`)).stdout).toBe(`net:[${listed[1]!.inode}]\n`);
    expect(await run(`${at} -all delete && ${at} list && ls -A ${dir}`)).toMatchObject({ status: 0, stdout: '' });
  });

  it('lists with no verb, says its version, and helps on stdout', async () => {
    expect(await run('$NETNS add blue && $NETNS')).toMatchObject({ status: 0, stdout: 'blue\n' });
    for (const flag of ['-V', '-Version', '--version']) expect(await run(`$NETNS ${flag}`)).toMatchObject({ status: 0, stdout: `netns ${VERSION}\n`, stderr: '' });
    for (const ask of ['help', '-h', '--help']) {
      const help = await run(`$NETNS ${ask}`);
      expect(help).toMatchObject({ status: 0, stderr: '' });
      for (const verb of ['list', 'add', 'attach', 'set', 'delete', 'identify', 'pids', 'exec', 'monitor', 'list-id', 'addrset', 'demo', 'runtime', '--run-dir']) {
        expect(help.stdout, `${ask} names ${verb}`).toContain(verb);
      }
    }
  });

  it('takes --json after identify and pids, and -j -p for indented JSON', async () => {
    const pids = await run('$NETNS add blue; $NETNS exec blue sleep 1000 & p=$!; until [ "$($NETNS pids blue --json)" != "[]" ]; do :; done; $NETNS pids blue --json; kill $p; wait');
    expect(JSON.parse(pids.stdout)).toEqual([expect.any(Number)]);
    expect(await run('$NETNS exec blue $NETNS identify --json')).toMatchObject({ status: 0, stdout: '["blue"]\n' });
    expect(await run('$NETNS identify --json')).toMatchObject({ status: 0, stdout: '[]\n' });
    expect((await run('$NETNS -j -p list')).stdout).toMatch(/^\[\n {2}\{\n {4}"name": "blue",/);
  });

  it('refuses an option it does not know as ip does (255, one line)', async () => {
    expect(await run('$NETNS -x list')).toMatchObject({ status: 255, stdout: '', stderr: 'Option "-x" is unknown, try "netns help".\n' });
    expect(await run('$NETNS --run-dir')).toMatchObject({ status: 255, stdout: '' });
    expect(await run('$NETNS --run-dir relative/dir list')).toMatchObject({
      status: 255,
      stdout: '',
      stderr: 'Option "--run-dir" needs an absolute directory, not "relative/dir"\n',
    });
  });

  it('names a --run-dir given with a trailing slash as the library uses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netns-cli-rundir-'));
    scratch.push(dir);
    expect(await run(`$NETNS --run-dir ${dir}/ add blue && $NETNS --run-dir ${dir}// add blue`)).toMatchObject({
      status: 1,
      stderr: `Cannot create namespace file "${dir}/blue": File exists\n`,
    });
  });

  it('dies of SIGPIPE, without a stack trace, when its reader goes away (monitor | head -1), as ip does', async () => {
    // The first event seen (the watch may begin between an add and its delete) is the line head takes;
    // the next write finds the pipe closed.
    const script = [
      'out=$(mktemp)',
      `bash -c '$NETNS monitor | head -1; echo "\${PIPESTATUS[0]}"' > "$out" 2>&1 &`,
      'until [ "$(wc -l < "$out")" -ge 2 ]; do ip netns add probe; ip netns del probe; done',
      'wait; cat "$out"; rm "$out"',
    ].join('\n');
    const result = await run(script);
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toMatch(/^(add|delete) probe\n141\n$/);
  });
});

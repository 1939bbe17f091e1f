import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { privileged } from '../helpers/privileges.js';

const name = `nscli-${process.pid}-${randomBytes(3).toString('hex')}`;

describe.skipIf(!privileged)('the netns command', () => {
  afterAll(() => {
    if (existsSync(`/run/netns/${name}`)) execFileSync('ip', ['netns', 'del', name]);
  });

  it('adds, lists, runs inside, identifies and deletes like ip netns', async () => {
    expect(await runCli('add', name)).toMatchObject({ code: 0, stderr: '' });
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(name);

    const listed = await runCli('list', '--json');
    expect(listed.code).toBe(0);
    const entries = JSON.parse(listed.stdout) as { name: string; alive: boolean; inode: number }[];
    const entry = entries.find((e) => e.name === name);
    expect(entry).toMatchObject({ alive: true });
    expect((await runCli('list')).stdout.split('\n')).toContain(name);

    const inside = await runCli('exec', name, '--', 'readlink', '/proc/self/ns/net');
    expect(inside).toMatchObject({ code: 0, stdout: `net:[${entry!.inode}]\n` });
    const linkList = await runCli('exec', name, 'ip', '-o', 'link');
    expect(linkList.stdout).toMatch(/^1: lo:/);

    const sleeper = execFileSync('ip', ['netns', 'exec', name, 'sh', '-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' });
    const pid = sleeper.trim();
    try {
      expect(await runCli('identify', pid)).toMatchObject({ code: 0, stdout: `${name}\n` });
      expect(JSON.parse((await runCli('identify', pid, '--json')).stdout)).toEqual([name]);
      expect(JSON.parse((await runCli('pids', name, '--json')).stdout)).toContain(Number(pid));
      expect((await runCli('pids', name)).stdout.split('\n')).toContain(pid);
    } finally {
      process.kill(Number(pid));
    }

    expect(await runCli('del', name)).toMatchObject({ code: 0 });
    expect(existsSync(`/run/netns/${name}`)).toBe(false);
  });

  it('passes the exit status of the command through', async () => {
    expect((await runCli('add', name)).code).toBe(0);
    try {
      expect((await runCli('exec', name, '--', 'sh', '-c', 'exit 7')).code).toBe(7);
      // killed as the command was, so a shell sees WIFSIGNALED and $? = 143, as with ip netns exec
      expect((await runCli('exec', name, '--', 'sh', '-c', 'kill -TERM $$')).signal).toBe('SIGTERM');
      const missing = await runCli('exec', name, 'surely-no-such-command');
      expect(missing.code).toBe(255);
      expect(missing.stderr).toMatch(/^netns: ENOENT: .*surely-no-such-command/);
    } finally {
      await runCli('del', name);
    }
  });

  it('reports errors on stderr with their code and a non-zero exit', async () => {
    const missing = await runCli('del', name);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^netns: ENOENT: /);
    expect(missing.stdout).toBe('');

    const invalid = await runCli('add', 'a/b');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^netns: ERR_NETNS_INVALID_NAME: /);

    expect((await runCli('add', name)).code).toBe(0);
    const taken = await runCli('add', name);
    expect(taken).toMatchObject({ code: 1 });
    expect(taken.stderr).toMatch(/^netns: EEXIST: /);
    await runCli('del', name);
  });

  it('has help and usage errors in the manner of a CLI', async () => {
    const help = await runCli('--help');
    expect(help.code).toBe(0);
    for (const verb of ['list', 'add', 'del', 'exec', 'identify', 'pids']) expect(help.stdout).toContain(verb);
    expect((await runCli('exec', '--help')).stdout).toContain('--no-etc');
    const unknown = await runCli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect((await runCli('add')).code).toBe(2);
  });
});

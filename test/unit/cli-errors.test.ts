// Every failure of the `netns` command is one line on stderr, nothing on
// stdout, and a stable non-zero exit code: "netns: CODE: message" and 2 for a
// usage error of our own commands; ip's words and status for the verbs of ip
// netns (cli-ip-parity.test.ts compares those with ip itself).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const scratch = mkdtempSync(join(tmpdir(), 'netns-cli-errors-'));
const CODED = /^netns: (ERR_NETNS_[A-Z_]+|E[A-Z0-9]+): \S/;

describe('CLI failures are coded', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const usage: [string, string[], RegExp][] = [
    ['an unknown option of addrset', ['addrset', 'list', 'x', '-t', 't', '--bogus'], /^netns: ERR_NETNS_INVALID_ARG: unknown option '--bogus'/],
    ['a missing argument of addrset', ['addrset', 'show', 'x', '-t', 't'], /^netns: ERR_NETNS_INVALID_ARG: missing required argument 'owner'/],
    ['a missing required option', ['addrset', 'show', 'x', 'owner'], /^netns: ERR_NETNS_INVALID_ARG: required option '-t, --table <table>' not specified/],
    ['gc with a live file that is not there', ['addrset', 'gc', 'x', '-t', 't', '--live-file', join(scratch, 'absent')], /^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: --live-file .*absent: cannot read it \(ENOENT/],
    ['gc with a live file that is not JSON', ['addrset', 'gc', 'x', '-t', 't', '--live-file', join(scratch, 'bad.json')], /^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: --live-file .*bad\.json: not JSON/],
    ['gc with a JSON live file that is not a list of strings', ['addrset', 'gc', 'x', '-t', 't', '--live-file', join(scratch, 'numbers.json')], /^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: --live-file .*numbers\.json: expected a JSON array/],
    ['gc without a live list', ['addrset', 'gc', 'x', '-t', 't'], /^netns: ERR_NETNS_ADDRSET_LIVE_REQUIRED: /],
    ['gc with --all and --live', ['addrset', 'gc', 'x', '-t', 't', '--all', '--live', 'y'], /^netns: ERR_NETNS_ADDRSET_INVALID_OPTION: --all /],
    ['an addrset backend that is not netlink or nft', ['addrset', 'list', 'x', '-t', 't', '--backend', 'iptables'], /^netns: ERR_NETNS_INVALID_ARG: option '--backend <backend>' argument 'iptables' is invalid\. Allowed choices are netlink, nft/],
    ['runtime with an empty folder name', ['runtime', ''], /^netns: ERR_NETNS_INVALID_ARG: dir must name a folder/],
  ];
  writeFileSync(join(scratch, 'bad.json'), '[ "a", ');
  writeFileSync(join(scratch, 'numbers.json'), '[1, 2]');

  for (const [what, args, stderr] of usage) {
    it(`${what}: exit 2, one coded line`, async () => {
      const result = await runCli(...args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(stderr);
      expect(result.stderr).toMatch(CODED);
    });
  }

  const ipVerbs: [string, string[], number, string][] = [
    ['an unknown verb', ['frobnicate'], 255, 'Command "frobnicate" is unknown, try "netns help".'],
    ['an unknown option', ['--bogus', 'list'], 255, 'Option "--bogus" is unknown, try "netns help".'],
    ['add without a name', ['add'], 1, 'No netns name specified'],
    ['a name ip refuses', ['add', 'a/b'], 255, 'Invalid netns name "a/b"'],
    ['exec without a command', ['exec', 'x'], 1, 'No command specified'],
    ['identify with a pid that is not a number', ['identify', 'abc'], 1, "Specified string 'abc' is not a pid"],
    ['attach without a pid', ['attach', 'x'], 1, 'No netns name and PID specified'],
    ['set with an id that is not one', ['set', 'x', 'y'], 255, 'Error: argument "y" is wrong: Invalid "netnsid" value'],
  ];

  for (const [what, args, code, stderr] of ipVerbs) {
    it(`${what}: exit ${code}, ip's line`, async () => {
      expect(await runCli(...args)).toEqual({ code, signal: null, stdout: '', stderr: `${stderr}\n` });
    });
  }

  it('help is not an error', async () => {
    expect(await runCli('--help')).toMatchObject({ code: 0, stderr: '' });
  });
});

// `netns` beside `ip netns` (iproute2 6.1): the same script runs in two fresh
// worlds (ip-world.ts), once with each, and every step must print the same
// and end the same (status, or the signal that killed it). Differences are
// only ip's own name in its messages, and the fields -j adds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH } from '../helpers/cli-path.js';
import { IpWorld, type WorldResult } from '../helpers/ip-world.js';
import { assertNobodyCanReach } from '../helpers/nobody-access.js';
import { privileged } from '../helpers/privileges.js';

interface Tool {
  name: string;
  /** sh words for `ip netns`, `ip -all netns`, `ip -j netns`. */
  words: Record<'ns' | 'all' | 'json', string>;
  env: Record<string, string>;
}

const IP: Tool = { name: 'ip', words: { ns: 'ip netns', all: 'ip -all netns', json: 'ip -j netns' }, env: {} };
const OURS: Tool = {
  name: 'netns',
  words: { ns: '$NETNS', all: '$NETNS -all', json: '$NETNS -j' },
  env: { NETNS: `${process.execPath} ${CLI_PATH}` },
};

const fill = (script: string, tool: Tool) => script.replace(/\{(ns|all|json)\}/g, (_, word: keyof Tool['words']) => tool.words[word]);

/** ip's messages name ip; ours name netns. */
const asOurs = (text: string) => text.replace(/ip netns help/g, 'netns help').replace(/ip \[-all\] netns/g, 'netns [-all]').replace(/ip netns/g, 'netns');

/** -j list: ip's fields (ours adds path, inode, alive). */
const ipFields = (stdout: string) => (JSON.parse(stdout) as { name: string; id?: number }[]).map(({ name, id }) => ({ name, ...(id === undefined ? {} : { id }) }));

interface Step {
  script: string;
  /** What of the output to compare, when not all of it. */
  project?: (result: WorldResult) => unknown;
}

const same = (result: WorldResult) => ({ ...result, stdout: asOurs(result.stdout), stderr: asOurs(result.stderr) });

// In order: each step sees what the ones before it made. Background processes are killed by the step that starts them.
const STEPS: Step[] = [
  { script: '{ns}' },
  { script: '{ns} list' },
  { script: '{ns} add blue' },
  { script: '{ns} add red' },
  { script: '{ns} add blue' },
  { script: "{ns} add 'x/y'" },
  { script: "{ns} add ''" },
  { script: '{ns} add ..' },
  { script: '{ns} add' },
  { script: '{ns}' },
  { script: '{ns} list' },
  { script: '{ns} show' },
  { script: '{ns} l' },
  { script: '{json} list', project: (r) => ({ ...r, stdout: ipFields(r.stdout) }) },
  { script: 'setpriv --reuid=nobody --regid=nogroup --clear-groups {ns} exec red true' },
  { script: '{ns} set blue 7' },
  { script: '{ns} set red auto' },
  { script: '{ns} set blue 7' },
  { script: '{ns} set blue 8' },
  { script: '{ns} set green 5' },
  { script: '{ns} set blue bogus' },
  { script: '{ns} set blue -3' },
  { script: '{ns} set blue' },
  { script: '{ns} set' },
  { script: '{ns} list' },
  { script: '{json} list', project: (r) => ({ ...r, stdout: ipFields(r.stdout) }) },
  { script: '{ns} list-id' },
  { script: '{json} list-id' },
  { script: '{ns} list-id nsid 7' },
  { script: '{ns} list-id nsid 0x7' },
  { script: '{ns} list-id target-nsid 7' },
  { script: '{ns} list-id nsid x' },
  // ip names argv[1] here, past the value: "(null)" (a slip, not kept).
  { script: '{ns} list-id nsid -1', project: (r) => ({ ...same(r), stderr: r.stderr.replace('"(null)"', '"-1"') }) },
  { script: '{ns} list-id nsid 1 nsid 2' },
  { script: '{ns} list-id nsid' },
  { script: '{ns} list-id frob' },
  { script: "{ns} exec blue sh -c 'exit 3'" },
  { script: '{ns} exec blue ip -o link' },
  { script: '{ns} exec blue surely-no-such-program' },
  { script: '{ns} exec green true' },
  { script: '{ns} exec' },
  { script: '{ns} exec blue' },
  { script: "{ns} exec blue sh -c 'kill -TERM $$'" },
  { script: "{ns} exec blue sh -c 'kill -USR2 $$'" },
  { script: "{ns} exec red sh -c 'echo out; echo err >&2'" },
  { script: '{all} exec echo hi' },
  { script: "{all} exec sh -c 'exit 4'" },
  { script: '{ns} identify' },
  { script: '{ns} exec red {ns} identify' },
  { script: '{ns} identify 999999' },
  { script: '{ns} identify 12x' },
  { script: '{ns} identify 1 2' },
  // A process of red's (ip's exec is the process; ours is a child of it: count, not pids).
  { script: "{ns} exec red sleep 1000 & sleep_wait() { until [ -n \"$({ns} pids red)\" ]; do :; done; }; sleep_wait; {ns} pids red | wc -l; kill $!; wait" },
  { script: '{ns} pids green' },
  { script: '{ns} pids' },
  { script: '{ns} pids red blue' },
  // attach: a process in a namespace of its own, named.
  { script: 'unshare -n sleep 1000 & pid=$!; until [ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ]; do :; done; {ns} attach green $pid; s=$?; {ns} identify $pid; {ns} list; kill $pid; wait; exit $s' },
  { script: '{ns} attach green $$' },
  { script: '{ns} attach grey 999999' },
  { script: '{ns} attach grey 12x' },
  { script: '{ns} attach grey 0' },
  { script: '{ns} attach grey' },
  { script: '{ns} list' },
  { script: '{ns} delete nope' },
  { script: '{ns} delete' },
  { script: '{ns} del blue' },
  { script: '{ns} list' },
  { script: '{ns} frobnicate' },
  { script: '{all} delete' },
  { script: '{ns} list' },
  { script: '{json} list' },
];

describe.skipIf(!privileged)('netns beside ip netns (iproute2 6.1)', () => {
  const worlds: Partial<Record<'ip' | 'netns', IpWorld>> = {};

  beforeAll(async () => {
    [worlds.ip, worlds.netns] = await Promise.all([IpWorld.open(), IpWorld.open()]);
  });

  afterAll(async () => {
    await Promise.all(Object.values(worlds).map((world) => world.close()));
  });

  it(`prints and exits as ip does, over ${STEPS.length} steps`, { timeout: 180_000 }, async () => {
    assertNobodyCanReach(CLI_PATH); // a step runs the CLI as nobody
    for (const [index, { script, project = same }] of STEPS.entries()) {
      const [theirs, ours] = await Promise.all([worlds.ip!.run(fill(script, IP), IP.env), worlds.netns!.run(fill(script, OURS), OURS.env)]);
      expect.soft(project(same(ours)), `step ${index}: ${script}`).toEqual(project(same(theirs)));
    }
  });

  it('monitors as ip does: "add NAME" and "delete NAME" in order', { timeout: 60_000 }, async () => {
    // Watching starts at some moment after the monitor starts: a probe name made and removed until it is
    // seen marks it (its lines are left out), then the names the test compares.
    const script = [
      'out=$(mktemp); stdbuf -oL {ns} monitor > "$out" & m=$!', // ip's printf buffers a file's lines
      'until grep -q "^delete probe$" "$out"; do ip netns add probe; ip netns del probe; done',
      '{ns} add one; {ns} add two; {ns} del one; ip netns attach three $$; ip netns del two; {ns} del three',
      'until grep -q "^delete three$" "$out"; do :; done',
      // bash may report the killed job ("Terminated") if it reaps it before wait: not the monitor's words.
      '{ kill $m; wait $m; } 2>/dev/null; grep -v probe "$out"; rm "$out"',
    ].join('\n');
    const [theirs, ours] = await Promise.all([worlds.ip!.run(fill(script, IP), IP.env), worlds.netns!.run(fill(script, OURS), OURS.env)]);
    expect(theirs.stdout).toBe('add one\nadd two\ndelete one\nadd three\ndelete two\ndelete three\n');
    expect(ours.stdout).toBe(theirs.stdout);
    expect(ours.stderr).toBe(theirs.stderr);
  });
});

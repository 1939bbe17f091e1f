// A lab's state as another process hands it back (Lab.attach, the CLI's
// state file), checked field by field before any namespace is opened by the
// names it holds: each damage refused with ERR_NETNS_INVALID_ARG saying where,
// and a whole state taken as it is. Plain data, no namespace.
import { describe, expect, it } from 'vitest';
import { checkPlanAndNames, checkRunState } from '../../dist/testing/lab/state.js';

const end = (node: string, iface: string, addresses: unknown = ['10.0.0.1/24']) => ({ node, iface, addresses });
const PLAN = () => ({
  prefix: 'nslab-',
  ipv6: false,
  nodes: [{ key: 'h1', kind: 'host' }, { key: 'r1', kind: 'router' }, { key: 's1', kind: 'switch' }] as Record<string, unknown>[],
  segments: [],
  links: [{ a: end('h1', 'eth0'), b: end('r1', 'eth0', ['10.0.0.254/24']) }] as unknown[],
  routes: { h1: [{ destination: '0.0.0.0/0', gateway: '10.0.0.254', device: 'eth0' }] } as Record<string, unknown>,
});
const NAMES = { h1: 'nslab-h1', r1: 'nslab-r1', s1: 'nslab-s1' };
const refused = (message: string) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: `lab state: ${message}` });

describe('checkPlanAndNames', () => {
  it('takes a whole plan and its names, a way out and private dirs included', () => {
    expect(() => checkPlanAndNames(PLAN(), NAMES)).not.toThrow();
    const plan = PLAN();
    plan.nodes[0]!.dirs = { '/etc': 'empty' };
    const nat = { node: 'r1', subnet: '10.99.0.0/30', iface: 'up0', routerAddress: '10.99.0.2/30', machineIface: 'nslab-up', machineAddress: '10.99.0.1/30' };
    expect(() => checkPlanAndNames({ ...plan, nat }, NAMES)).not.toThrow();
  });

  it('names the field of the plan that has the wrong kind', () => {
    const cases: [object, string][] = [
      [{ prefix: 7 }, 'plan.prefix must be a string, got number'],
      [{ ipv6: 'no' }, 'plan.ipv6 must be a boolean, got string'],
      [{ nodes: {} }, 'plan.nodes must be an array, got object'],
      [{ segments: null }, 'plan.segments must be an array, got null'],
      [{ links: 'a-b' }, 'plan.links must be an array, got string'],
      [{ routes: [] }, 'plan.routes must be an object, got an array'],
    ];
    for (const [change, message] of cases) expect(() => checkPlanAndNames({ ...PLAN(), ...change }, NAMES), message).toThrow(refused(message));
    expect(() => checkPlanAndNames([], NAMES)).toThrow(refused('plan must be an object, got an array'));
    expect(() => checkPlanAndNames(PLAN(), 'nslab-h1')).toThrow(refused('names must be an object, got string'));
  });

  it('refuses a node with a bad key or kind, without a name, or twice', () => {
    for (const node of [{ key: 'h 1', kind: 'host' }, { key: 'h1', kind: 'bridge' }, { key: 7, kind: 'host' }, { key: 'x'.repeat(33), kind: 'host' }]) {
      const plan = PLAN();
      plan.nodes[0] = node;
      expect(() => checkPlanAndNames(plan, NAMES), JSON.stringify(node)).toThrow(refused(`bad node ${JSON.stringify(node)}`));
    }
    const plan = PLAN();
    plan.nodes[0] = 'h1' as never;
    expect(() => checkPlanAndNames(plan, NAMES)).toThrow(refused('a plan node must be an object, got string'));
    expect(() => checkPlanAndNames(PLAN(), { h1: 'nslab-h1', r1: 'nslab-r1' })).toThrow(refused('names has none for node s1'));
    expect(() => checkPlanAndNames(PLAN(), Object.assign(Object.create({ s1: 'nslab-s1' }), { h1: 'nslab-h1', r1: 'nslab-r1' }))).toThrow(refused('names has none for node s1'));
    expect(() => checkPlanAndNames(PLAN(), { ...NAMES, s1: 'nslab-h1' })).toThrow(refused('node s1 or its namespace nslab-h1 appears twice'));
    const twice = PLAN();
    twice.nodes.push({ key: 'h1', kind: 'host' });
    expect(() => checkPlanAndNames(twice, NAMES)).toThrow(refused('node h1 or its namespace nslab-h1 appears twice'));
    expect(() => checkPlanAndNames(PLAN(), { ...NAMES, s1: '../etc' })).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_NAME' }));
  });

  it("refuses a node's private dirs that a spec could not have given", () => {
    const plan = PLAN();
    plan.nodes[0]!.dirs = { '/proc': 'empty' };
    expect(() => checkPlanAndNames(plan, NAMES)).toThrow(refused('node h1\'s dir "/proc" is the kernel\'s (/proc, /sys, /dev stay the machine\'s)'));
  });

  it("refuses a link's end that names an unknown node, a bad interface or bad addresses", () => {
    const link = (a: unknown) => ({ ...PLAN(), links: [{ a, b: end('r1', 'eth0') }] });
    expect(() => checkPlanAndNames(link(end('h9', 'eth0')), NAMES)).toThrow(refused('link 0\'s a names unknown node "h9"'));
    expect(() => checkPlanAndNames(link(end('h1', 'eth/0')), NAMES)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^lab state: .*link 0's a's interface/) }));
    expect(() => checkPlanAndNames(link(end('h1', 'eth0', '10.0.0.1/24')), NAMES)).toThrow(refused("link 0's a's addresses must be an array, got string"));
    expect(() => checkPlanAndNames(link(end('h1', 'eth0', [7])), NAMES)).toThrow(refused("link 0's a's address must be a string, got number"));
    expect(() => checkPlanAndNames(link(null), NAMES)).toThrow(refused("link 0's a must be an object, got null"));
    expect(() => checkPlanAndNames({ ...PLAN(), links: [{ a: end('h1', 'eth0'), b: end('x', 'eth0') }] }, NAMES)).toThrow(refused('link 0\'s b names unknown node "x"'));
    expect(() => checkPlanAndNames({ ...PLAN(), links: [7] }, NAMES)).toThrow(refused('link 0 must be an object, got number'));
  });

  it('refuses routes of an unknown node, or a route missing a field', () => {
    expect(() => checkPlanAndNames({ ...PLAN(), routes: { h9: [] } }, NAMES)).toThrow(refused('routes of unknown node "h9"'));
    expect(() => checkPlanAndNames({ ...PLAN(), routes: { h1: {} } }, NAMES)).toThrow(refused('routes of h1 must be an array, got object'));
    expect(() => checkPlanAndNames({ ...PLAN(), routes: { h1: ['default'] } }, NAMES)).toThrow(refused('a route of h1 must be an object, got string'));
    for (const field of ['destination', 'gateway', 'device']) {
      const route = { destination: '0.0.0.0/0', gateway: '10.0.0.254', device: 'eth0', [field]: 1 };
      expect(() => checkPlanAndNames({ ...PLAN(), routes: { h1: [route] } }, NAMES), field).toThrow(refused(`a route of h1's ${field} must be a string, got number`));
    }
  });

  it('refuses a way out naming an unknown node, missing a field, or with a bad machine interface', () => {
    const nat = { node: 'r1', subnet: '10.99.0.0/30', iface: 'up0', routerAddress: '10.99.0.2/30', machineIface: 'nslab-up', machineAddress: '10.99.0.1/30' };
    expect(() => checkPlanAndNames({ ...PLAN(), nat: 'r1' }, NAMES)).toThrow(refused('plan.nat must be an object, got string'));
    expect(() => checkPlanAndNames({ ...PLAN(), nat: { ...nat, node: 'r9' } }, NAMES)).toThrow(refused('plan.nat names unknown node "r9"'));
    for (const field of Object.keys(nat)) {
      expect(() => checkPlanAndNames({ ...PLAN(), nat: { ...nat, [field]: undefined } }, NAMES), field).toThrow(refused(`plan.nat.${field} must be a string, got undefined`));
    }
    expect(() => checkPlanAndNames({ ...PLAN(), nat: { ...nat, machineIface: 'x'.repeat(16) } }, NAMES)).toThrow(expect.objectContaining({ message: expect.stringMatching(/^lab state: .*plan\.nat's machine interface/) }));
  });
});

describe('checkRunState', () => {
  const plan = PLAN() as never;
  const STATE = () => ({ runDir: '/run/netns', impairments: [['h1', 'r1', { delay: '5ms' }]], down: ['r1>h1'], partitions: [{ id: 1, sides: [['h1'], ['r1', 's1']] }, { id: 3, sides: [['h1'], ['r1']] }], nextPartition: 4 }) as Record<string, unknown>;

  it('takes a whole run state', () => {
    expect(() => checkRunState(STATE(), plan)).not.toThrow();
    expect(() => checkRunState({ ...STATE(), impairments: [], down: [], partitions: [], nextPartition: 1 }, plan)).not.toThrow();
  });

  it('refuses a run directory, impairment or link down that is not of the plan', () => {
    expect(() => checkRunState({ ...STATE(), runDir: 'relative' }, plan)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringMatching(/^lab state: /) }));
    for (const entry of [['h1', 's1', {}], ['h1', 'r1'], 'h1>r1', ['h1', 'r1', {}, 'x']]) {
      expect(() => checkRunState({ ...STATE(), impairments: [entry] }, plan), JSON.stringify(entry)).toThrow(refused(`an impairment is [from, to, impairment] of a link, got ${JSON.stringify(entry)}`));
    }
    expect(() => checkRunState({ ...STATE(), impairments: [['h1', 'r1', { colour: 'red' }]] }, plan)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: expect.stringContaining('impairment of h1→r1') }));
    expect(() => checkRunState({ ...STATE(), impairments: {} }, plan)).toThrow(refused('impairments must be an array, got object'));
    for (const key of ['h1>s1', 'h1-r1', 7]) expect(() => checkRunState({ ...STATE(), down: [key] }, plan), String(key)).toThrow(refused(`a link down is "a>b" of a link, got ${JSON.stringify(key)}`));
    expect(() => checkRunState({ ...STATE(), down: 'h1>r1' }, plan)).toThrow(refused('down must be an array, got string'));
  });

  it('refuses partitions whose ids do not rise, whose sides are not node keys, or a next id not above them', () => {
    const bad = [
      { id: 0, sides: [['h1'], ['r1']] },
      { id: 1.5, sides: [['h1'], ['r1']] },
      { id: 5, sides: [['h1']] },
      { id: 5, sides: [['h1'], 'r1'] },
      { id: 5, sides: [['h1'], ['r9']] },
      { id: 5, sides: 'h1|r1' },
    ];
    for (const partition of bad) {
      expect(() => checkRunState({ ...STATE(), partitions: [partition], nextPartition: 9 }, plan), JSON.stringify(partition)).toThrow(refused(`bad partition ${JSON.stringify(partition)} (ids rise, sides are node keys)`));
    }
    const falling = [{ id: 3, sides: [['h1'], ['r1']] }, { id: 3, sides: [['h1'], ['r1']] }];
    expect(() => checkRunState({ ...STATE(), partitions: falling, nextPartition: 9 }, plan)).toThrow(refused(`bad partition ${JSON.stringify(falling[1])} (ids rise, sides are node keys)`));
    expect(() => checkRunState({ ...STATE(), partitions: [7] }, plan)).toThrow(refused('a partition must be an object, got number'));
    expect(() => checkRunState({ ...STATE(), partitions: null }, plan)).toThrow(refused('partitions must be an array, got null'));
    for (const next of [3, 2.5, '4', undefined]) {
      expect(() => checkRunState({ ...STATE(), nextPartition: next }, plan), String(next)).toThrow(refused(`nextPartition must be an integer above every partition's id, got ${String(next)}`));
    }
  });
});

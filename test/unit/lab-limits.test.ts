// A big lab's limits, checked against the plan before anything is made
// (ERR_NETNS_LAB_TOO_BIG, saying which limit and how to split the lab): a
// bridge's 1,023 ports, and the process's open files. The exact limit is
// taken and one more refused. /proc/self/fd and /proc/self/limits are this
// file's stand-ins, so the numbers are exact whatever the machine's.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { LabPlan } from '../../src/testing/lab/plan.js';

const proc = vi.hoisted(() => ({ open: 10, limits: '' }));
vi.mock('node:fs', async (actual) => {
  const fs = await actual<typeof import('node:fs')>();
  const readdirSync = (path: string, ...rest: never[]) => (path === '/proc/self/fd' ? Array.from({ length: proc.open }, (_, i) => String(i)) : fs.readdirSync(path, ...rest));
  const readFileSync = (path: string, ...rest: never[]) => (path === '/proc/self/limits' ? proc.limits : fs.readFileSync(path, ...rest));
  return { ...fs, default: { ...fs, readdirSync, readFileSync }, readdirSync, readFileSync };
});
const { BRIDGE_PORTS, checkLabLimits } = await import('../../src/testing/lab/limits.js');

/** /proc/self/limits as Linux prints it. */
const limits = (soft: string, hard: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max cpu time              unlimited            unlimited            seconds   ',
    `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
    'Max locked memory         8388608              8388608              bytes     ',
    '',
  ].join('\n');

type Link = [string, string, LabPlan['links'][number]['impair']?];
/** A plan as far as the limits look: its nodes by kind, its links' ends and impairments. */
function planOf(nodes: Record<string, 'host' | 'router' | 'switch'>, links: Link[]): LabPlan {
  const end = (node: string) => ({ node, iface: 'eth0', addresses: [] });
  return {
    prefix: 'nsfix-', ipv6: false, segments: [], routes: {},
    nodes: Object.entries(nodes).map(([key, kind]) => ({ key, kind })),
    links: links.map(([a, b, impair]) => ({ a: end(a), b: end(b), segment: 0, impair: impair ?? {} })),
  };
}
const tooBig = (text: string) => expect.objectContaining({ code: 'ERR_NETNS_LAB_TOO_BIG', message: expect.stringContaining(text) });

beforeEach(() => {
  proc.open = 10;
  proc.limits = limits('unlimited', 'unlimited');
});

describe('a switch takes at most 1,023 links (a bridge numbers ports in 10 bits, port 0 its own)', () => {
  /** Switch s with `count` hosts linked, the first named after the switch, the rest before it. */
  const star = (count: number, kind: 'switch' | 'host' = 'switch') => {
    const hosts = Array.from({ length: count }, (_, i) => `h${i}`);
    return planOf({ ...Object.fromEntries(hosts.map((h) => [h, 'host'])), s: kind }, hosts.map((h, i) => (i === 0 ? ['s', h] : [h, 's'])));
  };

  it('takes 1,023 and refuses 1,024, saying over how many switches to spread them', () => {
    expect(BRIDGE_PORTS).toBe(1023);
    expect(() => checkLabLimits(star(1023))).not.toThrow();
    expect(() => checkLabLimits(star(1024))).toThrow(
      tooBig('createLab: switch s has 1024 links; a Linux bridge takes at most 1023 ports: spread them over 2 or more switches linked to one another (still one subnet)'),
    );
  });

  it('counts two ports of each switch in a chain for its neighbours', () => {
    // 2,042 links fill two switches of 1,021 hosts each; one more needs a third.
    expect(() => checkLabLimits(star(2042))).toThrow(tooBig('spread them over 2 or more switches'));
    expect(() => checkLabLimits(star(2043))).toThrow(tooBig('switch s has 2043 links; a Linux bridge takes at most 1023 ports: spread them over 3 or more'));
  });

  it('limits only switches: a host or router has no bridge', () => {
    expect(() => checkLabLimits(star(1024, 'host'))).not.toThrow();
  });
});

describe("a lab's namespaces and sockets fit the process's open files", () => {
  // Ten nodes hold 20 descriptors; with the 10 open and 64 to spare, 94.
  const ten = planOf(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`n${i}`, 'host'])), []);

  it('takes a lab that fits the soft limit exactly, and refuses one descriptor more, saying how many nodes fit', () => {
    proc.limits = limits('94', '4096');
    expect(() => checkLabLimits(ten)).not.toThrow();
    proc.limits = limits('93', '4096');
    expect(() => checkLabLimits(ten)).toThrow(
      tooBig(
        "createLab: 10 nodes hold 20 descriptors (2 a node, one more for an impaired one), and with the 10 open and 64 to spare that is over this process's limit of 93 open files " +
          '(ulimit -n; hard limit 4096, which node raises the soft one to at start): raise the hard limit (ulimit -Hn, systemd\'s LimitNOFILE) or split the lab into labs of at most 9 nodes',
      ),
    );
  });

  it('counts what the process has open', () => {
    proc.limits = limits('94', '94');
    proc.open = 11;
    expect(() => checkLabLimits(ten)).toThrow(tooBig('with the 11 open'));
  });

  it('counts one more descriptor for each node that sends impaired, however many of its links are', () => {
    const impaired = planOf({ a: 'host', b: 'host', c: 'host' }, [['a', 'b', { a: { loss: 1 }, b: { loss: 1 } }], ['a', 'c', { a: { delay: 5 } }]]);
    proc.limits = limits('82', '82'); // 10 open + 3 × 2 + 2 impaired + 64
    expect(() => checkLabLimits(impaired)).not.toThrow();
    proc.limits = limits('81', '82');
    expect(() => checkLabLimits(impaired)).toThrow(tooBig('3 nodes hold 8 descriptors'));
  });

  it('says an unlimited hard limit is unlimited', () => {
    proc.limits = limits('93', 'unlimited');
    expect(() => checkLabLimits(ten)).toThrow(tooBig('(ulimit -n; hard limit unlimited, which'));
  });

  it('says 0 nodes fit when the spare alone is over the limit', () => {
    proc.limits = limits('50', '50');
    expect(() => checkLabLimits(ten)).toThrow(tooBig('labs of at most 0 nodes'));
  });

  it('takes any lab under an unlimited soft limit, or where /proc gives none', () => {
    proc.limits = limits('unlimited', 'unlimited');
    expect(() => checkLabLimits(ten)).not.toThrow();
    proc.limits = 'Limit                     Soft Limit           Hard Limit           Units     \n';
    expect(() => checkLabLimits(ten)).not.toThrow();
  });
});

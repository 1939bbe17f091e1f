// Limits a lab meets only when it is big, checked against the plan before
// anything is made: past them the kernel refuses half-way through a long
// build (a bridge's port table full: EXFULL, after seconds of work; the open
// files: EMFILE, after tens of seconds), which says neither which limit
// nor what to do.
import { readdirSync, readFileSync } from 'node:fs';
import { ErrorCodes, netnsError } from '../../core/errors.js';
import type { LabPlan } from './plan.js';

/** A Linux bridge numbers its ports in 10 bits (BR_MAX_PORTS, 1,024) and keeps port 0 for itself. */
export const BRIDGE_PORTS = 1023;
/** A node holds its namespace and its netlink socket for the lab's life; a node with impairments, its nf_tables socket too. */
const DESCRIPTORS_PER_NODE = 2;
/** What the process may still open besides (captures, the tests' own sockets and files). */
const SPARE_DESCRIPTORS = 64;

const tooBig = (message: string) => netnsError(ErrorCodes.LAB_TOO_BIG, `createLab: ${message}`);

/** Refuses a plan past a limit (ERR_NETNS_LAB_TOO_BIG), saying which and how to split the lab. */
export function checkLabLimits(plan: LabPlan): void {
  checkBridgePorts(plan);
  checkDescriptors(plan);
}

function checkBridgePorts(plan: LabPlan): void {
  const ports = new Map<string, number>();
  for (const { a, b } of plan.links) for (const end of [a.node, b.node]) ports.set(end, (ports.get(end) ?? 0) + 1);
  for (const { key, kind } of plan.nodes) {
    const count = ports.get(key) ?? 0;
    if (kind === 'switch' && count > BRIDGE_PORTS) {
      // A switch in a chain spends two ports on its neighbours.
      const switches = Math.ceil(count / (BRIDGE_PORTS - 2));
      throw tooBig(`switch ${key} has ${count} links; a Linux bridge takes at most ${BRIDGE_PORTS} ports: spread them over ${switches} or more switches linked to one another (still one subnet)`);
    }
  }
}

function checkDescriptors(plan: LabPlan): void {
  const impaired = new Set(plan.links.flatMap((link) => Object.keys(link.impair)));
  const needed = plan.nodes.length * DESCRIPTORS_PER_NODE + impaired.size;
  const open = readdirSync('/proc/self/fd').length;
  const { soft, hard } = openFileLimits();
  if (open + needed + SPARE_DESCRIPTORS <= soft) return;
  const fits = Math.max(0, Math.floor((soft - open - SPARE_DESCRIPTORS) / DESCRIPTORS_PER_NODE));
  throw tooBig(
    `${plan.nodes.length} nodes hold ${needed} descriptors (${DESCRIPTORS_PER_NODE} a node, one more for an impaired one), and with the ${open} open ` +
      `and ${SPARE_DESCRIPTORS} to spare that is over this process's limit of ${soft} open files (ulimit -n; hard limit ${hard === Infinity ? 'unlimited' : hard}, which node raises ` +
      `the soft one to at start): raise the hard limit (ulimit -Hn, systemd's LimitNOFILE) or split the lab into labs of at most ${fits} nodes`,
  );
}

/** RLIMIT_NOFILE as /proc shows it ("unlimited" as Infinity). */
function openFileLimits(): { soft: number; hard: number } {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'latin1'));
  const value = (text: string | undefined): number => (text === undefined || text === 'unlimited' ? Infinity : Number(text));
  return { soft: value(line?.[1]), hard: value(line?.[2]) };
}

// What a plugin can leave behind in one namespace, as comparable lines: links,
// addresses, routes of every table, the nftables ruleset and iptables rules
// (counters dropped), plus the files of a host-local IPAM directory. A leak is
// a line the scenario's end has that its start had not; a line gone is
// reported too (a plugin must not take away what was there).
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NetNS } from '../../../netns.js';
import { openNetlink } from '../../../netlink/index.js';

/** One namespace's state, as sorted lines. */
export type Snapshot = readonly string[];

/** Lines added and lines removed between two snapshots. */
export interface SnapshotDiff {
  added: string[];
  removed: string[];
}

async function routingLines(ns: NetNS): Promise<string[]> {
  const nl = await openNetlink(ns);
  try {
    const links = await nl.links.list();
    const nameOf = new Map(links.map((link) => [link.index, link.name]));
    const addresses = (await nl.addresses.list()).filter((a) => a.scope !== 'link');
    // the kernel's own local and multicast table entries follow the addresses: counted through them
    const routes = (await nl.routes.list({ table: 'all' })).filter((r) => r.table !== 255 && !r.destination.startsWith('ff00::'));
    return [
      ...links.map((link) => `link ${link.name} ${link.kind ?? ''}`.trimEnd()),
      ...addresses.map((a) => `address ${a.address}/${a.prefixLength} dev ${nameOf.get(a.index) ?? a.index}`),
      ...routes.map((r) => `route table ${r.table} ${r.destination}${r.gateway ? ` via ${r.gateway}` : ''} dev ${nameOf.get(r.device ?? -1) ?? '-'}`),
    ];
  } finally {
    nl.close();
  }
}

/** A program's output lines in the namespace; none when the program is not installed. */
async function toolLines(ns: NetNS, prefix: string, command: string, args: string[]): Promise<string[]> {
  try {
    const { stdout } = await ns.execFile(command, args);
    return stdout.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => `${prefix} ${line}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

// Tables of iptables-nft: iptables-save reports their rules.
const XTABLES = new Set(['filter', 'nat', 'mangle', 'raw', 'security']);

type NftObject = Record<string, { family: string; table: string; name?: string; chain?: string; expr?: unknown[]; elem?: unknown[] }>;

/** A rule's expressions without counters' values, which change with traffic. */
const ruleText = (expr: unknown[] = []): string => JSON.stringify(expr.filter((e) => !(typeof e === 'object' && e !== null && 'counter' in e)));

/**
 * What in the ruleset changes a packet's fate: rules, and the elements of sets
 * and maps. Empty tables, chains and sets are not counted: a shared table
 * stays by design, and a set may be kept empty for a delay before it goes.
 */
async function nftLines(ns: NetNS): Promise<string[]> {
  let objects: NftObject[];
  try {
    objects = (JSON.parse((await ns.execFile('nft', ['-j', 'list', 'ruleset'])).stdout) as { nftables: NftObject[] }).nftables;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return objects.flatMap((object) => {
    const [kind, o] = Object.entries(object)[0]!;
    if ((o.family === 'ip' || o.family === 'ip6') && XTABLES.has(o.table)) return [];
    const where = `${o.family} ${o.table}`;
    if (kind === 'rule') return [`nft ${where} chain ${o.chain}: ${ruleText(o.expr)}`];
    if ((kind === 'set' || kind === 'map') && o.elem?.length) return o.elem.map((e) => `nft ${where} ${kind} ${o.name}: ${JSON.stringify(e)}`);
    return [];
  });
}

/** iptables-save's rules and user chains: not its comments, counters, or the built-in chains a first call makes. */
async function iptablesLines(ns: NetNS, command: string): Promise<string[]> {
  const lines = await toolLines(ns, command, command, []);
  let table = '';
  return lines.flatMap((line) => {
    const rule = line.slice(command.length + 1);
    if (rule.startsWith('*')) table = rule.slice(1);
    if (!/^(-A |:\S+ - )/.test(rule)) return [];
    return [`${command} ${table}: ${rule.replace(/\[\d+:\d+\]/g, '').trimEnd()}`];
  });
}

/**
 * What host-local's files say of an allocation: an empty one is a reservation
 * whose IPAM was killed between creating the file and writing the container's
 * id into it (host-local's own window: no DEL can match it to release it).
 */
export const EMPTY_RESERVATION = ' (empty: its IPAM was killed while writing it)';

async function ipamLines(dataDir: string | undefined): Promise<string[]> {
  if (dataDir === undefined) return [];
  const entries = await readdir(dataDir, { recursive: true }).catch(() => []);
  // host-local's lock and last-reserved files stay by design; an allocation is a file named by its address
  const allocations = entries.filter((entry) => !/(^|\/)(lock|last_reserved_ip\.\d+)$/.test(entry));
  return Promise.all(
    allocations.map(async (entry) => {
      const size = await stat(join(dataDir, entry)).then((info) => (info.isFile() ? info.size : -1), () => -1);
      return `ipam ${entry}${size === 0 ? EMPTY_RESERVATION : ''}`;
    }),
  );
}

/** The namespace's state, with the IPAM directory's files when given. */
export async function snapshot(ns: NetNS, ipamDir?: string): Promise<Snapshot> {
  const lines = await Promise.all([
    routingLines(ns),
    nftLines(ns),
    iptablesLines(ns, 'iptables-save'),
    iptablesLines(ns, 'ip6tables-save'),
    ipamLines(ipamDir),
  ]);
  return lines.flat().sort();
}

export function diff(before: Snapshot, after: Snapshot): SnapshotDiff {
  const had = new Set(before);
  const has = new Set(after);
  return { added: after.filter((line) => !had.has(line)), removed: before.filter((line) => !has.has(line)) };
}

/** A diff as one line for a report: what was left, then what went. */
export function describeDiff({ added, removed }: SnapshotDiff): string {
  const parts = [...added.map((line) => `left: ${line}`), ...removed.map((line) => `gone: ${line}`)];
  return parts.length <= 4 ? parts.join('; ') : `${parts.slice(0, 4).join('; ')}; and ${parts.length - 4} more`;
}

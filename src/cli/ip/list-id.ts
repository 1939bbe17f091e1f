// `netns list-id [target-nsid N] [nsid N]`: the ids this namespace has
// assigned, each named by the named namespace it is (`nsid 0 (iproute2 netns
// name: blue)`), with ip's filters, errors and -j form.
import { openNetlink } from '../../netlink/index.js';
import { NetNS } from '../../netns.js';
import { writeJson, writeLines, type IpContext } from './context.js';
import { invalidArgument, IpFailure, kernelRefusal } from './failure.js';
import { cInteger, incompleteFailure, usageFailure } from './usage.js';

interface Filters {
  targetNsid?: number;
  nsid?: number;
}

function parseFilters(args: string[]): Filters {
  const filters: Filters = {};
  for (let i = 0; i < args.length; i++) {
    const key = args[i]!;
    if (key !== 'target-nsid' && key !== 'nsid') throw usageFailure();
    const field = key === 'nsid' ? 'nsid' : 'targetNsid';
    if (filters[field] !== undefined) throw new IpFailure(255, `Error: duplicate "${key}": "${key}" is the second value.`);
    const text = args[++i];
    if (text === undefined) throw incompleteFailure();
    const value = cInteger(text);
    if (value === undefined) throw invalidArgument(text, `"${key}" value is invalid`);
    if (value < 0) throw invalidArgument(text, `"${key}" value should be >= 0`);
    filters[field] = value;
  }
  return filters;
}

interface Row {
  nsid?: number;
  'current-nsid'?: number;
  name?: string;
}

function asText(row: Row, unassigned: { nsid: boolean; current: boolean }): string {
  let line = row.nsid === undefined ? 'nsid unassigned ' : `nsid ${row.nsid} `;
  if (row['current-nsid'] !== undefined) line += `current-nsid ${row['current-nsid']} `;
  else if (unassigned.current) line += 'current-nsid unassigned ';
  return row.name === undefined ? line : `${line}(iproute2 netns name: ${row.name})`;
}

export async function listId(args: string[], context: IpContext): Promise<number> {
  const filters = parseFilters(args);
  using nl = await openNetlink();
  const ids = await nl.nsids.list(filters).catch((error: unknown) => {
    throw kernelRefusal(error);
  });
  const names = await nl.nsids.names(NetNS.list({ runDir: context.runDir }).filter((entry) => entry.alive));
  // With target-nsid the kernel always says the current id, as -1 when there is none.
  const currentAsked = filters.targetNsid !== undefined;
  const rows = ids.map(({ nsid, currentNsid }) => {
    const row: Row = {};
    if (nsid !== undefined) row.nsid = nsid;
    if (currentNsid !== undefined) row['current-nsid'] = currentNsid;
    const key = currentAsked ? currentNsid : nsid;
    const name = key === undefined ? undefined : names.get(key);
    if (name !== undefined) row.name = name;
    return { row, unassigned: { nsid: nsid === undefined, current: currentAsked && currentNsid === undefined } };
  });
  if (context.json) writeJson(rows.map(({ row }) => row), context);
  else writeLines(rows.map(({ row, unassigned }) => asText(row, unassigned)));
  return 0;
}

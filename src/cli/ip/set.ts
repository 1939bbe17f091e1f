// `netns set NAME NSID|auto`: the id this namespace is to have for NAME's.
import { openNetlink } from '../../netlink/index.js';
import { NetNS } from '../../netns.js';
import type { IpContext } from './context.js';
import { invalidArgument, IpFailure, kernelRefusal, reason } from './failure.js';
import { cInteger } from './usage.js';

function parseId(text: string): number | 'auto' {
  if (text === 'auto') return 'auto';
  const id = cInteger(text);
  if (id === undefined) throw invalidArgument(text, 'Invalid "netnsid" value');
  if (id < 0) throw invalidArgument(text, '"netnsid" value should be >= 0');
  return id;
}

export async function set(args: string[], context: IpContext): Promise<number> {
  if (args.length < 1) throw new IpFailure(1, 'No netns name specified');
  if (args.length < 2) throw new IpFailure(1, 'No nsid specified');
  const [name, idText] = args as [string, string];
  const id = parseId(idText);
  let ns: NetNS;
  try {
    ns = NetNS.open(name, { runDir: context.runDir });
  } catch (error) {
    throw new IpFailure(1, `Cannot open network namespace "${name}": ${reason(error)}`, { cause: error });
  }
  try {
    using nl = await openNetlink();
    await nl.nsids.set(ns, id);
  } catch (error) {
    throw kernelRefusal(error);
  } finally {
    ns.close();
  }
  return 0;
}

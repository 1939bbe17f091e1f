// `netns identify [PID]` and `netns pids NAME`: which named namespace a
// process is in, and which processes are in a named namespace. ip prints one
// name (the last it finds) or an empty line; --json (ours) gives every name.
import { ErrorCodes } from '../../core/errors.js';
import { NetNS } from '../../netns.js';
import { writeJson, writeLines, type IpContext } from './context.js';
import { IpFailure, reason } from './failure.js';

const PID = /^\d+$/;

/** A trailing --json (ours), taken off the arguments ip would see. */
function jsonAsked(args: string[]): [boolean, string[]] {
  const rest = args.filter((arg) => arg !== '--json');
  return [rest.length !== args.length, rest];
}

function cannotOpen(error: unknown): IpFailure {
  return new IpFailure(1, `Cannot open network namespace: ${reason(error)}`, { cause: error });
}

export function identify(args: string[], context: IpContext): number {
  const [json, rest] = jsonAsked(args);
  if (rest.length > 1) throw new IpFailure(1, 'extra arguments specified');
  const pidText = rest[0];
  if (pidText !== undefined && !PID.test(pidText)) throw new IpFailure(1, `Specified string '${pidText}' is not a pid`);
  let names: string[];
  try {
    // ip reads /proc/<pid>/ns/net with the pid as given: 0 or 00 are not this process.
    names = NetNS.identify(pidText === undefined ? { pid: process.pid } : { pid: Number(pidText) }, { runDir: context.runDir });
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCodes.INVALID_ARG) throw cannotOpen({ errno: 2 });
    throw cannotOpen(error);
  }
  if (json || context.json) writeJson(names, context);
  else writeLines([names.at(-1) ?? '']);
  return 0;
}

export function pids(args: string[], context: IpContext): number {
  const [json, rest] = jsonAsked(args);
  if (rest.length < 1) throw new IpFailure(1, 'No netns name specified');
  if (rest.length > 1) throw new IpFailure(1, 'extra arguments specified');
  let found: number[];
  try {
    found = NetNS.pids(rest[0]!, { runDir: context.runDir });
  } catch (error) {
    throw cannotOpen(error);
  }
  if (json || context.json) writeJson(found, context);
  else writeLines(found.map(String));
  return 0;
}

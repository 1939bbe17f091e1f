// `netns add NAME` and `netns attach NAME PID`: a named namespace made, or
// named after a process's, with ip's messages for each step that can fail.
import { ErrorCodes } from '../../core/errors.js';
import { NetNS } from '../../netns.js';
import { pathOf, type IpContext } from './context.js';
import { invalidNameFailure, IpFailure, reason } from './failure.js';

interface Failed {
  code?: unknown;
  syscall?: unknown;
  path?: unknown;
}

/** The message ip gives for the step that failed, told by the syscall and its path. */
function stepFailure(error: unknown, name: string, source: string, context: IpContext): IpFailure {
  const { code, syscall, path } = (error ?? {}) as Failed;
  if (code === ErrorCodes.INVALID_NAME) return invalidNameFailure(name);
  const target = pathOf(name, context);
  const why = reason(error);
  let line: string;
  if (syscall === 'mkdir') line = `mkdir ${context.runDir} failed: ${why}`;
  else if (syscall === 'mount' && path === context.runDir) line = `mount --make-shared ${context.runDir} failed: ${why}`;
  else if (syscall === 'open' && path === target) line = `Cannot create namespace file "${target}": ${why}`;
  else if (syscall === 'unshare') line = `Failed to create a new network namespace "${name}": ${why}`;
  else if (syscall === 'mount' || path === source) line = `Bind ${source} -> ${target} failed: ${why}`;
  else line = `Cannot create namespace file "${target}": ${why}`;
  return new IpFailure(1, line, { cause: error });
}

export async function add(args: string[], context: IpContext): Promise<number> {
  if (args.length < 1) throw new IpFailure(1, 'No netns name specified');
  const name = args[0]!;
  try {
    (await NetNS.create(name, { runDir: context.runDir })).close();
  } catch (error) {
    throw stepFailure(error, name, '/proc/self/ns/net', context);
  }
  return 0;
}

export async function attach(args: string[], context: IpContext): Promise<number> {
  if (args.length < 2) throw new IpFailure(1, 'No netns name and PID specified');
  const [name, pidText] = args as [string, string];
  // ip's get_s32 takes any int but 0; a negative pid only fails later, at the bind: here at once.
  if (!/^[+]?\d+$/.test(pidText) || Number(pidText) === 0 || Number(pidText) > 2 ** 31 - 1) throw new IpFailure(1, `Invalid PID: ${pidText}`);
  const pid = Number(pidText);
  try {
    (await NetNS.attach(name, pid, { runDir: context.runDir })).close();
  } catch (error) {
    throw stepFailure(error, name, `/proc/${pid}/ns/net`, context);
  }
  return 0;
}

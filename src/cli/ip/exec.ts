// `netns exec NAME cmd ...` and `netns -all exec cmd ...`. The command runs
// as our child (ip execs in place; Node cannot), made to look the same from
// outside: every signal is passed on, it dies with us, and we end as it ends
// (see ../exec-in.ts). `--no-etc` before NAME (ours) skips the /etc/netns and
// /sys setup; a `--` right after NAME is dropped, as earlier versions needed it.
import { NetNS } from '../../netns.js';
import type { IpContext } from './context.js';
import { IpFailure, reason } from './failure.js';

interface Parsed {
  etc: boolean;
  name?: string;
  command: string[];
}

function parse(args: string[], all: boolean): Parsed {
  const etc = args[0] !== '--no-etc';
  const rest = etc ? args : args.slice(1);
  if (all) return { etc, command: rest };
  if (rest.length < 1) throw new IpFailure(1, 'No netns name specified');
  const [name, ...command] = rest as [string, ...string[]];
  return { etc, name, command: command[0] === '--' ? command.slice(1) : command };
}

function open(name: string, context: IpContext, status: number): NetNS {
  try {
    return NetNS.open(name, { runDir: context.runDir });
  } catch (error) {
    throw new IpFailure(status, `Cannot open network namespace "${name}": ${reason(error)}`, { cause: error });
  }
}

// Entering the namespace is ip's netns_switch(), which words its failures so and exits 255;
// only what fails after (exec itself) is "exec of ... failed", status 1.
function execFailure(name: string, command: string, error: unknown): IpFailure {
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  if (syscall === 'setns') return new IpFailure(255, `setting the network namespace "${name}" failed: ${reason(error)}`, { cause: error });
  if (syscall === 'unshare') return new IpFailure(255, `unshare failed: ${reason(error)}`, { cause: error });
  return new IpFailure(1, `exec of "${command}" failed: ${reason(error)}`, { cause: error });
}

/** Writes `text` and waits until it is out: the command writes to the same stdout right after. */
function flushed(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
}

export async function exec(args: string[], context: IpContext): Promise<number> {
  const { etc, name, command } = parse(args, context.all);
  if (command.length < 1) throw new IpFailure(1, 'No command specified');
  const [program, ...programArgs] = command as [string, ...string[]];
  const { runForwarded, runChild } = await import('../exec-in.js');
  if (name !== undefined) {
    const ns = open(name, context, 255);
    return runForwarded(ns, program, programArgs, { etc }).catch((error: unknown) => {
      throw execFailure(name, program, error);
    });
  }
  // -all: one after another, as ip; a command killed by a signal ends the round with status 1, as ip.
  for (const entry of NetNS.list({ runDir: context.runDir })) {
    await flushed(`\nnetns: ${entry.name}\n`);
    let ended;
    try {
      using ns = open(entry.name, context, 1);
      ended = await runChild(ns, program, programArgs, { etc });
    } catch (error) {
      process.stderr.write(`${(error instanceof IpFailure ? error : execFailure(entry.name, program, error)).message}\n`);
      continue;
    }
    if (ended.signal !== null) return 1;
  }
  return 0;
}

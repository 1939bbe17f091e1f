// `netns list|add|del|exec|identify|pids`: the `ip netns` verbs.
import type { Command } from 'commander';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { NetNS } from '../netns.js';
import { runForwarded } from './exec-in.js';
import { EXIT_EXEC_FAILED, EXIT_USAGE, printResult } from './output.js';

function pidArgument(text: string): number {
  if (!/^[1-9]\d*$/.test(text)) {
    throw Object.assign(netnsError(ErrorCodes.INVALID_ARG, `pid must be a positive integer, got ${JSON.stringify(text)}`), { exitCode: EXIT_USAGE });
  }
  return Number(text);
}

export function addNamespaceCommands(program: Command): void {
  program
    .command('list')
    .description('list named network namespaces (/run/netns)')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) => {
      const entries = NetNS.list();
      printResult(entries, Boolean(options.json), () =>
        entries.map((entry) => (entry.alive ? entry.name : `${entry.name} (not mounted)`)),
      );
    });

  program
    .command('add')
    .description('create a named network namespace, as ip netns add')
    .argument('<name>')
    .action(async (name: string) => {
      (await NetNS.create(name)).close();
    });

  program
    .command('del')
    .alias('delete')
    .description('delete a named network namespace, as ip netns del')
    .argument('<name>')
    .action(async (name: string) => {
      await NetNS.delete(name);
    });

  program
    .command('exec')
    .description('run a command inside a named namespace, as ip netns exec')
    .argument('<name>')
    .argument('<command...>', 'command and arguments (put -- before options of the command)')
    .option('--no-etc', 'skip the /etc/netns/NAME and /sys setup that ip netns exec does')
    .passThroughOptions()
    .action(async (name: string, command: string[], options: { etc: boolean }) => {
      process.exitCode = await execIn(name, command, options.etc);
    });

  program
    .command('identify')
    .description('names of the namespace a process is in, as ip netns identify')
    .argument('[pid]', 'process id (default: this process)')
    .option('--json', 'print JSON')
    .action((pid: string | undefined, options: { json?: boolean }) => {
      const names = NetNS.identify({ pid: pid === undefined ? process.pid : pidArgument(pid) });
      printResult(names, Boolean(options.json), () => names);
    });

  program
    .command('pids')
    .description('processes inside a named namespace, as ip netns pids')
    .argument('<name>')
    .option('--json', 'print JSON')
    .action((name: string, options: { json?: boolean }) => {
      const pids = NetNS.pids(name);
      printResult(pids, Boolean(options.json), () => pids.map(String));
    });
}

async function execIn(name: string, argv: string[], etc: boolean): Promise<number> {
  // Options after the name are the command's; a '--' before them is ours.
  const [command, ...args] = argv[0] === '--' ? argv.slice(1) : argv;
  if (command === undefined) throw netnsError(ErrorCodes.INVALID_ARG, 'exec needs a command to run');
  const ns = NetNS.open(name);
  try {
    return await runForwarded(ns, command, args, { etc }).catch((error: unknown) => {
      Object.assign(error as object, { exitCode: EXIT_EXEC_FAILED });
      throw error;
    });
  } finally {
    ns.close();
  }
}

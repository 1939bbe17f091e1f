// The commands of ours that `ip netns` has no verb for (addrset, cni, demo,
// lab, runtime, sandbox), parsed by commander, which only these calls load.
import { Command, CommanderError } from 'commander';
import { addAddrsetCommands } from './addrset-commands.js';
import { addCniCommands } from './cni-commands.js';
import { addDemoCommand } from './demo-command.js';
import { addLabCommands } from './lab-commands.js';
import { addRuntimeCommand } from './runtime-command.js';
import { addSandboxCommand } from './sandbox-command.js';
import { asNetnsError, EXIT_FAILURE, EXIT_USAGE, reportError, reportUsageError } from './output.js';

export function buildToolsProgram(): Command {
  const program = new Command('netns')
    .description('the commands of netns beyond the verbs of ip netns')
    .showHelpAfterError()
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: reportUsageError }); // before the subcommands, which inherit it
  addAddrsetCommands(program);
  addCniCommands(program);
  addDemoCommand(program);
  addLabCommands(program);
  addRuntimeCommand(program);
  addSandboxCommand(program);
  return program;
}

/** Runs `netns <tool command> ...`; resolves with the exit status. */
export async function runTool(args: string[]): Promise<number> {
  try {
    await buildToolsProgram().parseAsync(args, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    reportError(error);
    return (asNetnsError(error) as { exitCode?: number }).exitCode ?? EXIT_FAILURE;
  }
}

/** The tool commands' part of `netns help`. */
export function toolsHelp(): string {
  return buildToolsProgram().helpInformation();
}

export const TOOL_COMMANDS = ['addrset', 'cni', 'demo', 'lab', 'runtime', 'sandbox'];

#!/usr/bin/env node
// The `netns` command. Subcommand groups live in their own files.
import { Command, CommanderError } from 'commander';
import { addAddrsetCommands } from './addrset-commands.js';
import { addDemoCommand } from './demo-command.js';
import { addNamespaceCommands } from './namespace-commands.js';
import { addRuntimeCommand } from './runtime-command.js';
import { asNetnsError, EXIT_FAILURE, EXIT_USAGE, reportError, reportUsageError } from './output.js';

export function buildProgram(): Command {
  const program = new Command('netns')
    .description('Linux network namespaces: ip-netns-compatible lifecycle and namespace tools')
    .showHelpAfterError()
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: reportUsageError }); // before the subcommands, which inherit it
  addNamespaceCommands(program);
  addAddrsetCommands(program);
  addDemoCommand(program);
  addRuntimeCommand(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    reportError(error);
    process.exitCode = (asNetnsError(error) as { exitCode?: number }).exitCode ?? EXIT_FAILURE;
  }
}

await main(process.argv);

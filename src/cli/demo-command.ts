// `netns demo` (also `npm start`).
import type { Command } from 'commander';
import { runDemo } from '../demo/run-demo.js';

export function addDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('show the package at work on real namespaces it makes and removes (needs root)')
    .option('--json', 'print one JSON report instead of the narrative')
    .action(async (options: { json?: boolean }) => {
      process.exitCode = await runDemo({ json: Boolean(options.json) });
    });
}

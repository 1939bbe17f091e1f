// `netns demo` (also `npm start`).
import type { Command } from 'commander';

export function addDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('show the package at work on real namespaces it makes and removes (needs root)')
    .option('--json', 'print one JSON report instead of the narrative')
    .action(async (options: { json?: boolean }) => {
      const { runDemo } = await import('../demo/run-demo.js'); // only when asked for: help does not pay for it
      process.exitCode = await runDemo({ json: Boolean(options.json) });
    });
}

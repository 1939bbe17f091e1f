#!/usr/bin/env node
// The `netns` command. The verbs of `ip netns` come first and behave as
// iproute2 6.1's do (output, messages, exit statuses), so a script can call
// netns where it called ip netns; addrset, cni, demo, lab, runtime and sandbox are ours. Only
// what the verb needs is loaded (see ip/dispatch.ts): the package ships this
// as one CommonJS file (scripts/build-cli.mjs), which starts faster than ES modules.
import { VERSION } from '../core/version.js';
import { matches, parseGlobalOptions } from './global-options.js';
import { findVerb, runVerb } from './ip/dispatch.js';
import { IpFailure } from './ip/failure.js';
import { EXIT_FAILURE, reportError } from './output.js';

const TOOL_COMMANDS = new Set(['addrset', 'cni', 'demo', 'lab', 'runtime', 'sandbox']);

async function run(argv: string[]): Promise<number> {
  const { options, rest } = parseGlobalOptions(argv);
  if (options.version) {
    process.stdout.write(`netns ${VERSION}\n`);
    return 0;
  }
  const [word, ...args] = rest;
  if (options.help || (word !== undefined && (matches(word, 'help') || word === '--help'))) {
    process.stdout.write(`${await (await import('./help.js')).helpText()}\n`);
    return 0;
  }
  if (word === undefined) return runVerb(findVerb('list')!, [], options);
  const verb = findVerb(word);
  if (verb) return runVerb(verb, args, options);
  if (TOOL_COMMANDS.has(word)) return (await import('./tools.js')).runTool(rest);
  throw new IpFailure(255, `Command "${word}" is unknown, try "netns help".`);
}

function fail(error: unknown): number {
  if (error instanceof IpFailure) {
    process.stderr.write(`${error.message}\n`);
    return error.status;
  }
  reportError(error);
  return EXIT_FAILURE;
}

// A reader that went away (`netns monitor | head -1`) ends us as it ends ip: by SIGPIPE, with no
// stack trace (Node ignores SIGPIPE and reports EPIPE as an error instead).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  void import('./signal-forwarding.js').then(({ exitLikeChild }) => exitLikeChild(null, 'SIGPIPE'));
});

run(process.argv.slice(2)).then(
  (status) => (process.exitCode = status),
  (error: unknown) => (process.exitCode = fail(error)),
);

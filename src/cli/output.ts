// How our own commands (addrset, demo, lab, runtime, sandbox) speak: results on stdout
// (plain or --json), errors on stderr as "netns: CODE: message" (every error
// a NetnsError with a stable code), exit 0 done, 1 failed, 2 usage. The verbs
// of ip netns speak as ip does instead (see ip/failure.ts).
import { ErrorCodes, NetnsError, netnsError, systemError } from '../core/errors.js';

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** ERR_NETNS_INVALID_ARG that ends the command with the usage status. */
export function usageError(message: string): Error {
  return Object.assign(netnsError(ErrorCodes.INVALID_ARG, message), { exitCode: EXIT_USAGE });
}

export function printResult(value: unknown, json: boolean, asText: () => string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const lines = asText();
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

/** Any error as a NetnsError: Node's system errors keep their errno code; anything else is ERR_NETNS_UNKNOWN. */
export function asNetnsError(error: unknown): NetnsError {
  if (error instanceof NetnsError) return error;
  const failed = error as NodeJS.ErrnoException & { exitCode?: number };
  let converted: NetnsError;
  if (error instanceof Error && typeof failed.errno === 'number' && typeof failed.syscall === 'string') {
    converted = systemError(failed.errno, failed.syscall, failed.path);
  } else {
    converted = netnsError(ErrorCodes.UNKNOWN, error instanceof Error ? error.message : String(error), { cause: error });
  }
  return failed?.exitCode === undefined ? converted : Object.assign(converted, { exitCode: failed.exitCode });
}

export function reportError(error: unknown): void {
  const { code, message } = asNetnsError(error);
  process.stderr.write(`netns: ${code}: ${message.replace(/^[A-Z_]+: /, '')}\n`);
}

/** Commander's own usage errors ("error: unknown option '--x'"), said as ours. */
export function reportUsageError(text: string, write: (text: string) => void): void {
  write(`netns: ${ErrorCodes.INVALID_ARG}: ${text.replace(/^error: /, '')}`);
}

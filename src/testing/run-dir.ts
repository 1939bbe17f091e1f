// The run directory a fixture call's options name (createTestNetwork, sweep):
// checked as NetNS.create checks it, with any other key refused, before
// anything is made or deleted.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { refuseUnknownKeys } from '../core/known-keys.js';
import { runDirOf, type RunDirOption } from '../core/names.js';

/** The run directory of options that take `runDir` only (default /run/netns); ERR_NETNS_INVALID_ARG for a bad one or another key. */
export function fixtureRunDir(options: RunDirOption | undefined, what: string): string {
  const runDir = runDirOf(options);
  refuseUnknownKeys(options, ['runDir'], what, (message) => netnsError(ErrorCodes.INVALID_ARG, message));
  return runDir;
}

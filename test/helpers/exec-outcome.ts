// ns.execFile's outcome however the command exits: its status and output, as
// tests of commands that are meant to fail (a CNI plugin's error object) read them.
import type { CommandFailedError, ExecFileOptions, NetNS } from '../../dist/index.js';

export interface ExecOutcome {
  /** The exit status (-1 when a signal ended the command). */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` in `ns`; a non-zero exit resolves, anything else (a command that cannot start) rejects. */
export async function execOutcome(ns: NetNS, command: string, args: string[], options: ExecFileOptions): Promise<ExecOutcome> {
  try {
    const { stdout, stderr } = await ns.execFile(command, args, options);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandFailedError;
    if (failed.code !== 'ERR_NETNS_COMMAND_FAILED') throw error;
    return { code: failed.exitCode ?? -1, stdout: failed.stdout, stderr: failed.stderr };
  }
}

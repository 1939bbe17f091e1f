import { execFile } from 'node:child_process';
import { CLI_PATH } from './cli-path.js';

export interface CliResult {
  code: number;
  /** The signal that killed the CLI, if one did (then `code` is 1). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the `netns` command as a user would, in a child process. */
export function runCli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, signal: error?.signal ?? null, stdout, stderr });
    });
  });
}

import { execFile } from 'node:child_process';
import { CLI_PATH } from './cli-path.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the `netns` command as a user would, in a child process. */
export function runCli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

// Runs a CNI plugin file as a runtime does: CNI_* variables, the configuration
// on stdin, stdout and the exit code read back. Handlers of the test plugins
// report what they were given on stderr as lines starting HANDLER (JSON).
import { spawn } from 'node:child_process';

export interface PluginRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What each handler call reported (none: no handler ran). */
  calls: Record<string, unknown>[];
  /** stdout parsed, when it is one JSON value. */
  json?: Record<string, unknown>;
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Runs `node file` with exactly `env` (nothing inherited); stdin gets `input`, or is never closed when input is null. */
export function runPlugin(file: string, env: Record<string, string>, input: string | null): Promise<PluginRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const calls = stderr
        .split('\n')
        .filter((line) => line.startsWith('HANDLER '))
        .map((line) => JSON.parse(line.slice('HANDLER '.length)) as Record<string, unknown>);
      const json = parsed(stdout);
      resolve({ code, stdout, stderr, calls, ...(json ? { json } : {}) });
    });
    if (input !== null) child.stdin.end(input);
  });
}

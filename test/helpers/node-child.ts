// Runs an ES module script in a fresh node process, for behaviour that needs a
// process of its own (a polluted prototype, a full descriptor table) or is
// about whether that process can exit by itself.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/**
 * `killAfterMs` only bounds a child that never exits (old, broken code), so
 * that a hang is reported as a failed result rather than a test timeout.
 */
export function runNodeScript(script: string, { prefix = [] as string[], killAfterMs = 20_000 } = {}): Promise<ChildResult> {
  const argv = [...prefix, process.execPath, '--input-type=module', '-e', script];
  return new Promise((resolve) => {
    const child = execFile(argv[0]!, argv.slice(1), { cwd: packageRoot, timeout: killAfterMs }, (error, stdout, stderr) => {
      const failed = error as (Error & { code?: number | string; signal?: string }) | null;
      resolve({
        code: failed ? (typeof failed.code === 'number' ? failed.code : null) : 0,
        signal: failed?.signal ?? null,
        stdout,
        stderr,
      });
    });
    child.stdin?.end();
  });
}

/** An import specifier for a file of this package's dist/, usable from a child's script. */
export function distUrl(file: string): string {
  return new URL(`../../dist/${file}`, import.meta.url).href;
}

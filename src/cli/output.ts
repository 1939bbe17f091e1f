// How the CLI speaks: results on stdout (plain or --json), errors on stderr
// with their code, and exit codes in the manner of `ip netns`.
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** `ip netns exec` exits 255 when it cannot run the command. */
export const EXIT_EXEC_FAILED = 255;

export function printResult(value: unknown, json: boolean, asText: () => string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const lines = asText();
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

export function reportError(error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`netns: ${typeof code === 'string' ? `${code}: ` : ''}${message.replace(/^[A-Z_]+: /, '')}\n`);
}

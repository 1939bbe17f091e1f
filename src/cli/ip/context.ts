// What every `ip netns` verb is given: the global options, and output in
// ip's two forms (plain lines, or with -j one JSON document).
import type { GlobalOptions } from '../global-options.js';

export type IpContext = GlobalOptions;

/** A verb: its arguments (after the verb's name) in, ip's exit status out. */
export type Verb = (args: string[], context: IpContext) => Promise<number> | number;

export function writeLines(lines: readonly string[]): void {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

/** As ip -j (one line) or ip -j -p (indented). */
export function writeJson(value: unknown, context: IpContext): void {
  process.stdout.write(`${JSON.stringify(value, null, context.pretty ? 2 : undefined)}\n`);
}

/** runDir/NAME, as ip spells the paths in its messages. */
export function pathOf(name: string, context: IpContext): string {
  return `${context.runDir}/${name}`;
}

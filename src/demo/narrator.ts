// Tells what the demo does: a short narrative for people (colour only on a
// terminal) or one JSON document for machines.
import { ErrorCodes } from '../core/errors.js';

export interface StepRecord {
  step: string;
  ok: boolean;
  ms: number;
  details: string[];
  /** The error's code and message, as the CLI prints them. */
  error?: string;
}

/** "CODE: message", as the CLI prints an error (a system error's message already starts with its code). */
export function codeAndMessage(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  return `${typeof code === 'string' ? code : ErrorCodes.UNKNOWN}: ${message.replace(/^[A-Z_]+: /, '')}`;
}

const paint = (code: number) => (text: string) => `\u001b[${code}m${text}\u001b[0m`;
const plain = (text: string) => text;

export class Narrator {
  readonly steps: StepRecord[] = [];
  readonly #json: boolean;
  readonly #green: (text: string) => string;
  readonly #red: (text: string) => string;
  readonly #dim: (text: string) => string;
  readonly #bold: (text: string) => string;

  constructor(json: boolean, colour: boolean) {
    this.#json = json;
    this.#green = colour ? paint(32) : plain;
    this.#red = colour ? paint(31) : plain;
    this.#dim = colour ? paint(2) : plain;
    this.#bold = colour ? paint(1) : plain;
  }

  say(line: string): void {
    if (!this.#json) process.stdout.write(`${line}\n`);
  }

  /** Runs one step, timing it; `note` adds a line of what it showed. */
  async step(title: string, run: (note: (line: string) => void) => Promise<void>): Promise<void> {
    const details: string[] = [];
    const start = performance.now();
    const record: StepRecord = { step: title, ok: true, ms: 0, details };
    this.steps.push(record);
    try {
      await run((line) => details.push(line));
    } catch (error) {
      record.ok = false;
      record.error = codeAndMessage(error);
      throw error;
    } finally {
      record.ms = Math.round((performance.now() - start) * 10) / 10;
      this.#print(record);
    }
  }

  #print(record: StepRecord): void {
    if (this.#json) return;
    const mark = record.ok ? this.#green('✓') : this.#red('✗');
    this.say(`${mark} ${this.#bold(record.step)} ${this.#dim(`(${record.ms} ms)`)}`);
    for (const line of record.details) this.say(`    ${line}`);
    if (record.error) this.say(`    ${this.#red(record.error)}`);
  }

  finish(ok: boolean, totalMs: number): void {
    if (this.#json) {
      process.stdout.write(`${JSON.stringify({ ok, totalMs: Math.round(totalMs), steps: this.steps }, null, 2)}\n`);
      return;
    }
    if (!ok) this.say(this.#red('The demo failed; everything it made was removed.'));
    else this.say(this.#green(`All steps passed in ${Math.round(totalMs)} ms; everything the demo made is gone.`));
  }
}

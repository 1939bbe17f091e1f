// A real PATH without some commands (no mocks): a directory of symlinks to
// every command on the current PATH except those named.
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface BarePath {
  /** The PATH value to give a child process. */
  path: string;
  dispose(): void;
}

export function pathWithout(...commands: string[]): BarePath {
  const dir = mkdtempSync(join(tmpdir(), `netns-path-without-${commands.join('-')}-`));
  const seen = new Set(commands);
  for (const from of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (seen.has(name)) continue;
      seen.add(name);
      symlinkSync(join(from, name), join(dir, name));
    }
  }
  return { path: dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

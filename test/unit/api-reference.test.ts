// The API reference's check, `npm run docs:check`: TypeDoc over the entry
// points of package.json "exports" with typedoc.json's validation, every
// warning an error. It passes on this checkout; and, so that passing means
// something, it fails on a project with typedoc.json's settings and the faults
// it is for (an export and a member without a doc comment, a {@link} to
// nothing), naming each.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../helpers/node-child.js';

const typedoc = join(packageRoot, 'node_modules', 'typedoc', 'bin', 'typedoc');
// The package's run converts its whole program (about 6 s on two idle cores);
// slower when the rest of the suite runs beside it.
const TIMEOUT_MS = 90_000;

interface Outcome {
  code: number;
  output: string;
}

/** The arguments `npm run docs:check` gives typedoc, so that the test runs the script itself. */
function checkArguments(): string[] {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...args] = (pkg.scripts['docs:check'] ?? '').split(' ');
  if (command !== 'typedoc') throw new Error(`docs:check is no longer a plain typedoc command: ${pkg.scripts['docs:check']}`);
  return args;
}

/** The check, run in `cwd` (typedoc reads the typedoc.json there); NO_COLOR: plain text to match. */
function runCheck(cwd: string): Promise<Outcome> {
  const env = { ...process.env, NO_COLOR: '1' };
  return new Promise((resolve) => {
    execFile(process.execPath, [typedoc, ...checkArguments()], { cwd, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

/** A project whose typedoc.json extends ours, keeping its validation, with one of each fault. */
function faultyProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netns-api-reference-'));
  const files = {
    'package.json': JSON.stringify({ name: 'fixture', version: '0.0.0' }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'node20', target: 'es2023', types: [] }, files: ['index.ts'] }),
    // Ours minus what names our own files: they are not in this project.
    'typedoc.json': JSON.stringify({
      extends: [join(packageRoot, 'typedoc.json')],
      entryPoints: ['index.ts'],
      tsconfig: 'tsconfig.json',
      projectDocuments: [],
      intentionallyNotExported: [],
      readme: 'none',
    }),
    'index.ts': [
      '/** Documented, with a link to {@link nowhere}. */',
      'export function linked(): void {}',
      'export function bare(): void {}',
      '/** Documented, with one member undocumented. */',
      'export interface Box {',
      '  /** Documented. */',
      '  lid: boolean;',
      '  size: number;',
      '}',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('the API reference check (npm run docs:check)', () => {
  const faulty = faultyProject();
  afterAll(() => rmSync(faulty, { recursive: true, force: true }));
  // Started together: each run takes seconds.
  const ours = runCheck(packageRoot);
  const theirs = runCheck(faulty);

  it('passes on this checkout, saying nothing', async () => {
    expect(await ours).toEqual({ code: 0, output: '' });
  }, TIMEOUT_MS);

  it('fails on an undocumented export and member and on a broken link, naming each and nothing else', async () => {
    const { code, output } = await theirs;
    expect(code, output).not.toBe(0);
    const warnings = output.split('\n').filter((line) => line.startsWith('[warning] ') && !line.startsWith('[warning] Found '));
    expect(warnings.sort(), output).toEqual([
      '[warning] Box.size (Property), defined in fixture/index.ts, does not have any documentation',
      '[warning] Failed to resolve link to "nowhere" in comment for linked',
      '[warning] bare (CallSignature), defined in fixture/index.ts, does not have any documentation',
    ]);
  }, TIMEOUT_MS);
});

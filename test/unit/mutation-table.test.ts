// The score table `npm run mutate` prints and docs/maintainers.md keeps
// (scripts/mutation-table.mjs): a timeout is a kill, a mutant that never ran
// is out of the score, the table renders as Markdown, and files run on
// different days add up, per folder, from their saved summaries with the
// survivors listed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveSummaries, savedTable, scoreTable } from '../../scripts/mutation-table.mjs';

const dir = mkdtempSync(join(tmpdir(), 'mutation-table-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mutant(status: string, line: number, mutatorName = 'BooleanLiteral', replacement = 'false') {
  return { status, location: { start: { line, column: 3 } }, mutatorName, replacement };
}

const report = {
  files: {
    'src/core/switch.ts': { mutants: [mutant('Killed', 1), mutant('Timeout', 2), mutant('Survived', 3), mutant('NoCoverage', 4, 'BlockStatement', '{}')] },
    'src/core/names.ts': { mutants: [mutant('CompileError', 5), mutant('Ignored', 6)] },
    'src/run/pool.ts': { mutants: [mutant('Killed', 7)] },
    'src/other/x.ts': { mutants: [mutant('Survived', 8)] },
  },
};

const rowOf = (table: string, folder: string) => table.split('\n').find((line: string) => line.startsWith(`| ${folder} `))?.split('|').map((cell) => cell.trim()).slice(1, -1);

describe('the mutation score table', () => {
  it('counts a timeout as killed and leaves errors and ignored mutants out of the score', () => {
    const table = scoreTable(report, ['src/core', 'src/run']);
    expect(rowOf(table, 'src/core')).toEqual(['src/core', '6', '2', '1', '1', '1', '1', '50.0%', '66.7%']);
    expect(rowOf(table, 'src/run')).toEqual(['src/run', '1', '1', '0', '0', '0', '0', '100.0%', '100.0%']);
    expect(rowOf(table, 'total')?.slice(1)).toEqual(['7', '3', '1', '1', '1', '1', '60.0%', '75.0%']);
    expect(table).not.toContain('src/other');
  });

  it('is a Markdown table: each rule cell dashes with the colon of a right-aligned column at its end', () => {
    const [, rule] = scoreTable(report, ['src/core']).split('\n');
    const cells = rule!.split('|').slice(1, -1);
    expect(cells[0]).toMatch(/^-+$/);
    for (const cell of cells.slice(1)) expect(cell).toMatch(/^-+:$/);
  });

  it('adds up files saved by separate runs, says how many of a folder\'s files ran, names folders not run, and lists each survivor', () => {
    for (const file of ['src/core/switch.ts', 'src/core/names.ts', 'src/core/types.ts', 'src/core/later.ts', 'src/run/pool.ts']) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), '');
    }
    saveSummaries(dir, report, ['src/core/switch.ts', 'src/core/names.ts', 'src/core/types.ts', 'src/core/gone.ts'], { commit: 'aaa1111', date: '2026-12-01' });
    saveSummaries(dir, { files: { 'src/run/pool.ts': { mutants: [mutant('Survived', 9)] } } }, ['src/run/pool.ts'], { commit: 'bbb2222', date: '2026-12-02' });
    // A later run of one file replaces that file's summary and keeps the others'.
    saveSummaries(dir, { files: { 'src/core/names.ts': { mutants: [mutant('Killed', 5)] } } }, ['src/core/names.ts'], { commit: 'ccc3333', date: '2026-12-03' });
    const table = savedTable(dir);
    // switch.ts (4) + names.ts (1, run again); gone.ts is no longer in the checkout.
    expect(rowOf(table, 'src/core')?.slice(1, 4)).toEqual(['5', '3', '1']);
    expect(rowOf(table, 'src/run')?.slice(1, 4)).toEqual(['1', '0', '1']);
    expect(table).toContain('Runs: src/run: all 1 files (2026-12-02, commit bbb2222); src/core: 3 of 4 files (2026-12-01, commit aaa1111; 2026-12-03, commit ccc3333).');
    expect(table).toContain('Not run yet: src/addrset, src/cni, src/testing/lab.');
    const saved = JSON.parse(readFileSync(join(dir, 'docs/mutation/src-core.json'), 'utf8'));
    expect(saved.files['src/core/switch.ts'].survived).toEqual(['src/core/switch.ts:3:3 BooleanLiteral: "false"']);
    expect(saved.files['src/core/switch.ts'].noCoverage).toEqual(['src/core/switch.ts:4:3 BlockStatement: "{}"']);
    expect(saved.files['src/core/switch.ts'].counts.timedOut).toBe(1);
    expect(saved.files['src/core/types.ts'].counts.mutants).toBe(0);
    expect(saved.files['src/core/names.ts'].commit).toBe('ccc3333');
  });

  it('marks a run with the unit tests alone as a lower bound', () => {
    mkdirSync(join(dir, 'src/cni'), { recursive: true });
    writeFileSync(join(dir, 'src/cni/args.ts'), '');
    saveSummaries(dir, { files: { 'src/cni/args.ts': { mutants: [mutant('Killed', 1)] } } }, ['src/cni/args.ts'], { commit: 'ddd4444', date: '2026-12-07', tests: 'unit' });
    const table = savedTable(dir);
    expect(table).toContain('src/cni: all 1 files (2026-12-07, commit ddd4444, unit tests only: a lower bound)');
    // A row of its own, so that a folder's row keeps one measure.
    expect(rowOf(table, 'src/cni (unit tests only)')?.slice(1, 3)).toEqual(['1', '1']);
    expect(table.split('\n').filter((line) => line.split('|')[1]?.trim() === 'src/cni')).toEqual([]);
  });
});

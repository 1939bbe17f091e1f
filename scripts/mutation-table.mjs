#!/usr/bin/env node
// The per-folder score table of a Stryker JSON report (the
// mutation-testing-report-schema: files -> mutants, each with a status).
// scripts/mutate.mjs prints it after a run; run alone, it prints the table of
// the last report again:
//
// usage: node scripts/mutation-table.mjs [report.json] [folder...]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPORT = 'reports/mutation/mutation.json';

/** The folders `npm run mutate` measures when it is given none. */
export const DEFAULT_FOLDERS = ['src/run', 'src/core', 'src/addrset', 'src/cni', 'src/testing/lab'];

const COLUMNS = ['folder', 'mutants', 'killed', 'survived', 'no coverage', 'ignored', 'errors', 'score', 'covered score'];

function emptyCounts() {
  return { mutants: 0, killed: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
}

/** Which of the counts a mutant's status adds to; a timeout counts as killed, as Stryker counts it. */
function bucket(status) {
  switch (status) {
    case 'Killed':
    case 'Timeout':
      return 'killed';
    case 'Survived':
      return 'survived';
    case 'NoCoverage':
      return 'noCoverage';
    case 'Ignored':
      return 'ignored';
    default:
      // CompileError, RuntimeError: the mutant never ran a test, as Stryker leaves it out of the score.
      return 'errors';
  }
}

/** The folder of `folders` that holds `file`, the most specific one if several do. */
function folderOf(file, folders) {
  const holders = folders.filter((folder) => file.startsWith(`${folder}/`));
  return holders.sort((a, b) => b.length - a.length)[0];
}

/** Counts per folder (in the order given) and in total, of the report's mutants in those folders. */
export function tally(report, folders) {
  const rows = new Map(folders.map((folder) => [folder, emptyCounts()]));
  const total = emptyCounts();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const folder = folderOf(file, folders);
    if (folder === undefined) continue;
    for (const { status } of mutants) {
      for (const counts of [rows.get(folder), total]) {
        counts.mutants += 1;
        counts[bucket(status)] += 1;
      }
    }
  }
  return { rows, total };
}

function percent(part, whole) {
  return whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`;
}

function cells(name, c) {
  return [
    name,
    c.mutants,
    c.killed,
    c.survived,
    c.noCoverage,
    c.ignored,
    c.errors,
    // Of what could be killed: killed / (killed + survived + no coverage).
    percent(c.killed, c.killed + c.survived + c.noCoverage),
    // Of what some test runs: no-coverage mutants left out.
    percent(c.killed, c.killed + c.survived),
  ].map(String);
}

/** The table as Markdown (plain text that also renders in docs/maintainers.md). */
export function scoreTable(report, folders) {
  const { rows, total } = tally(report, folders);
  const lines = [...rows].map(([folder, counts]) => cells(folder, counts));
  if (rows.size > 1) lines.push(cells('total', total));
  const widths = COLUMNS.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i].length)));
  const row = (line) => `| ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (i === 0 ? `-${'-'.repeat(width)}-` : `-${'-'.repeat(width - 1)}:-`)).join('|')}|`;
  return [row(COLUMNS), rule, ...lines.map(row)].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file = REPORT, ...folders] = process.argv.slice(2);
  const report = JSON.parse(readFileSync(file, 'utf8'));
  console.log(scoreTable(report, folders.length > 0 ? folders : DEFAULT_FOLDERS));
}

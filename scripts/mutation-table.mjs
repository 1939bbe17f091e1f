#!/usr/bin/env node
// The per-folder score table of a Stryker JSON report (the
// mutation-testing-report-schema: files -> mutants, each with a status).
// scripts/mutate.mjs prints it after a run; run alone, it prints the table of
// the last report again:
//
// usage: node scripts/mutation-table.mjs [report.json] [folder...]
//        node scripts/mutation-table.mjs --saved   (the table of docs/mutation/)
//
// A run's report is in reports/ (not kept in git, and the HTML is megabytes);
// what a maintainer needs from it, each source file's counts and the mutants
// that survived, is saved per file (one JSON per folder) in docs/mutation/
// and kept in git. So a folder too big for one sitting is run a few files at
// a time, and runs of different files, on different days, add up to one table.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPORT = 'reports/mutation/mutation.json';

/** Where each folder's files' summaries of their last runs are kept (docs/mutation/src-core.json). */
export const SAVED = 'docs/mutation';

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
export function folderOf(file, folders) {
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
  return countsTable(tally(report, folders));
}

function countsTable({ rows, total }) {
  const lines = [...rows].map(([folder, counts]) => cells(folder, counts));
  if (rows.size > 1) lines.push(cells('total', total));
  const widths = COLUMNS.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i].length)));
  const row = (line) => `| ${line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  // A right-aligned column's rule ends in its colon, or Markdown renders no table.
  const rule = `|${widths.map((width, i) => (i === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [row(COLUMNS), rule, ...lines.map(row)].join('\n');
}

/** What a survivor or an unreached mutant is to a reader: where, and the edit. */
function described(file, { location, mutatorName, replacement }) {
  return `${file}:${location.start.line}:${location.start.column} ${mutatorName}: ${JSON.stringify(replacement ?? '')}`;
}

/** One file's counts in `report` (zero when it had no mutant), with its survivors and unreached mutants listed. */
export function fileSummary(report, file, provenance) {
  const counts = emptyCounts();
  const survived = [];
  const noCoverage = [];
  // Killed by a timeout (Stryker counts it killed): on a busy machine, a slow test can pass for one.
  let timedOut = 0;
  for (const mutant of report.files[file]?.mutants ?? []) {
    counts.mutants += 1;
    counts[bucket(mutant.status)] += 1;
    if (mutant.status === 'Survived') survived.push(described(file, mutant));
    if (mutant.status === 'NoCoverage') noCoverage.push(described(file, mutant));
    if (mutant.status === 'Timeout') timedOut += 1;
  }
  return { ...provenance, counts: { ...counts, timedOut }, survived, noCoverage };
}

const savedFile = (root, folder) => join(root, SAVED, `${folder.replaceAll('/', '-')}.json`);

function readSaved(root, folder) {
  const file = savedFile(root, folder);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { folder, files: {} };
}

/**
 * Keeps the summary of each of `files` (every file the run mutated, a file
 * without mutants too) in its folder's docs/mutation/ JSON, replacing that
 * file's earlier one and keeping the folder's other files'.
 */
export function saveSummaries(root, report, files, provenance, folders = DEFAULT_FOLDERS) {
  mkdirSync(join(root, SAVED), { recursive: true });
  for (const folder of folders) {
    const mine = files.filter((file) => folderOf(file, folders) === folder);
    if (mine.length === 0) continue;
    const saved = readSaved(root, folder);
    for (const file of mine) saved.files[file] = fileSummary(report, file, provenance);
    saved.files = Object.fromEntries(Object.entries(saved.files).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(savedFile(root, folder), `${JSON.stringify(saved, null, 2)}\n`);
  }
}

/** The .ts files under `folder` in the checkout at `root` (none when it is not there). */
export function sourceFiles(root, folder) {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => `${folder}/${name.split(sep).join('/')}`)
    .sort();
}

/** Adds each file's counts of `files` (entries of a saved folder) up. */
function added(files) {
  const counts = emptyCounts();
  for (const [, summary] of files) for (const key of Object.keys(counts)) counts[key] += summary.counts[key];
  return counts;
}

/**
 * The table of the saved summaries: per folder, its files' counts added up
 * (a file since removed from the checkout left out), how many of its files
 * have been run, and when. Files measured with the unit tests alone (a lower
 * bound) are a row of their own, "<folder> (unit tests only)", so that the
 * folder's row keeps one measure; the total adds both.
 */
export function savedTable(root, folders = DEFAULT_FOLDERS) {
  const rows = new Map();
  const total = emptyCounts();
  const runs = [];
  const missing = [];
  for (const folder of folders) {
    const present = new Set(sourceFiles(root, folder));
    const files = Object.entries(readSaved(root, folder).files).filter(([file]) => present.has(file));
    if (files.length === 0) {
      missing.push(folder);
      continue;
    }
    const [full, unitOnly] = [files.filter(([, { tests }]) => tests !== 'unit'), files.filter(([, { tests }]) => tests === 'unit')];
    for (const [label, group] of [[folder, full], [`${folder} (unit tests only)`, unitOnly]]) {
      if (group.length === 0) continue;
      const counts = added(group);
      for (const key of Object.keys(total)) total[key] += counts[key];
      rows.set(label, counts);
    }
    const when = [...new Set(files.map(([, { date, commit, tests }]) => `${date}, commit ${commit}${tests === 'unit' ? ', unit tests only: a lower bound' : ''}`))].sort().join('; ');
    const part = files.length < present.size ? `${files.length} of ${present.size} files` : `all ${present.size} files`;
    runs.push(`${folder}: ${part} (${when})`);
  }
  const lines = [countsTable({ rows, total }), ''];
  if (runs.length > 0) lines.push(`Runs: ${runs.join('; ')}.`);
  if (missing.length > 0) lines.push(`Not run yet: ${missing.join(', ')}.`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--saved') {
  console.log(savedTable(join(fileURLToPath(import.meta.url), '..', '..')));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file = REPORT, ...folders] = process.argv.slice(2);
  const report = JSON.parse(readFileSync(file, 'utf8'));
  console.log(scoreTable(report, folders.length > 0 ? folders : DEFAULT_FOLDERS));
}

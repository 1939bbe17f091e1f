// Types of scripts/mutation-table.mjs for the tests that import it.
/** A report in Stryker's JSON format, as far as the table reads it. */
export interface MutationReport {
  files: Record<string, { mutants: { status: string; location: { start: { line: number; column: number } }; mutatorName: string; replacement?: string }[] }>;
}
export const REPORT: string;
export const SAVED: string;
export const DEFAULT_FOLDERS: string[];
export function scoreTable(report: MutationReport, folders: string[]): string;
export function saveSummaries(root: string, report: MutationReport, files: string[], provenance: { commit: string; date: string; tests?: 'unit' }, folders?: string[]): void;
export function sourceFiles(root: string, folder: string): string[];
export function folderOf(file: string, folders: string[]): string | undefined;
export function savedTable(root: string, folders?: string[]): string;

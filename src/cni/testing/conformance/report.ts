// The runner's table: a row per scenario, as plain text for a terminal or
// Markdown for a page.
import { ErrorCodes, netnsError } from '../../../core/errors.js';

/** One scenario's row. */
export interface ScenarioReport {
  /** The scenario's name (a ScenarioName). */
  scenario: string;
  /** FAIL when a call failed or something was left behind or taken away. */
  result: 'pass' | 'FAIL' | 'skip';
  /** Failures, then what was measured; the reason for a skip. */
  detail: string;
}

/** The rows as a table: `markdown` for a page, else aligned text. */
export function formatReport(rows: readonly ScenarioReport[], options: { markdown?: boolean } = {}): string {
  if (!Array.isArray(rows) || !rows.every((r: ScenarioReport) => typeof r?.scenario === 'string' && typeof r.result === 'string' && typeof r.detail === 'string')) {
    throw netnsError(ErrorCodes.INVALID_ARG, 'formatReport takes the rows checkPlugin resolved with: [{ scenario, result, detail }, ...]');
  }
  if (typeof options !== 'object' || options === null) throw netnsError(ErrorCodes.INVALID_ARG, 'formatReport options must be an object: { markdown? }');
  if (options.markdown) {
    const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
    return ['| scenario | result | detail |', '|---|---|---|', ...rows.map((r) => `| ${r.scenario} | ${r.result} | ${cell(r.detail)} |`)].join('\n');
  }
  const width = Math.max(...rows.map((r) => r.scenario.length), 'scenario'.length);
  return [`${'scenario'.padEnd(width)}  result  detail`, ...rows.map((r) => `${r.scenario.padEnd(width)}  ${r.result.padEnd(6)}  ${r.detail}`)].join('\n');
}

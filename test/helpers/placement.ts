// Where nftables tables really are. The suite runs in a throwaway network
// namespace (scripts/test-isolated.mjs): that is the tests' "host", and the
// address-set tests assert that their tables are in the target namespace and
// not there, so that code running nft in the wrong namespace fails the test.
import { execFile } from 'node:child_process';
import { expect } from 'vitest';
import type { NetNS } from '../../dist/index.js';

/** The tests' host ruleset (the namespace the test process itself is in). */
export function hostRuleset(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('nft', ['list', 'ruleset'], { encoding: 'utf8', maxBuffer: 1 << 28 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

/** Tables of a JSON listing (`nft -j list tables`), as "family name". */
function tablesOf(stdout: string): string[] {
  const items = (JSON.parse(stdout) as { nftables: { table?: { family: string; name: string } }[] }).nftables;
  return items.flatMap((item) => (item.table ? [`${item.table.family} ${item.table.name}`] : []));
}

function hostTables(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('nft', ['-j', 'list', 'tables'], { encoding: 'utf8', maxBuffer: 1 << 28 }, (error, stdout) => (error ? reject(error) : resolve(tablesOf(stdout))));
  });
}

/** Asserts that `table` is in `ns` and not in the tests' host namespace (JSON listings: any name works). */
export async function expectTableOnlyIn(ns: NetNS, table: string, family = 'inet'): Promise<void> {
  const wanted = `${family} ${table}`;
  const inTarget = tablesOf((await ns.execFile('nft', ['-j', 'list', 'tables'])).stdout);
  expect(inTarget, `tables of the target namespace net:[${ns.inode}]`).toContain(wanted);
  expect(await hostTables(), "tables of the tests' host namespace").not.toContain(wanted);
}

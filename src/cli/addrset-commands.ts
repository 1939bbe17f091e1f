// `netns addrset list|show|gc NS`: look at and clean up the address sets kept
// in a namespace's nftables table.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AddressSets, type GcReport, type SetInfo } from '../addrset/index.js';
import { printResult } from './output.js';

interface CommonOptions {
  table: string;
  prefix: string;
  json?: boolean;
}

function withSets<T>(netns: string, options: CommonOptions, createTable: boolean, use: (sets: AddressSets) => Promise<T>): Promise<T> {
  return AddressSets.open({ netns, table: options.table, prefix: options.prefix, createTable }).then(async (sets) => {
    try {
      return await use(sets);
    } finally {
      await sets.close();
    }
  });
}

function common(command: Command): Command {
  return command
    .requiredOption('-t, --table <table>', 'the inet table holding the sets')
    .option('--prefix <prefix>', 'set-name prefix of the owning instance', 'as')
    .option('--json', 'print JSON');
}

function describeDeadline(deadline: number | undefined): string {
  return deadline === undefined ? '' : ` until ${new Date(deadline).toISOString()}`;
}

function listLines(rows: SetInfo[]): string[] {
  return rows.map(
    (row) => `${row.name}  ipv${row.family}  ${row.state}${describeDeadline(row.deadline)}  ${row.elements} elements  ${JSON.stringify(row.owner)}`,
  );
}

function gcLines(report: GcReport): string[] {
  const verb = report.dryRun ? 'would remove' : 'removed';
  return [
    ...report.removed.map((e) => `${verb} ${e.name} (${JSON.stringify(e.owner)})`),
    ...report.kept.map((e) => `kept ${e.name} (${JSON.stringify(e.owner)}): ${e.reason}${describeDeadline(e.deadline)}`),
  ];
}

/** Owners from --live and --live-file (a JSON array of strings, or one owner per line). */
function liveOwners(options: { live?: string[]; liveFile?: string }): string[] {
  const owners = [...(options.live ?? [])];
  if (options.liveFile !== undefined) {
    const text = readFileSync(options.liveFile, 'utf8');
    const parsed = text.trimStart().startsWith('[') ? (JSON.parse(text) as unknown) : text.split('\n').filter((line) => line !== '');
    if (!Array.isArray(parsed) || parsed.some((owner) => typeof owner !== 'string')) {
      throw Object.assign(new Error(`${options.liveFile}: expected a JSON array of strings or one owner per line`), { code: 'ERR_NETNS_INVALID_ARG' });
    }
    owners.push(...(parsed as string[]));
  }
  return owners;
}

export function addAddrsetCommands(program: Command): void {
  const addrset = program.command('addrset').description('per-owner address sets (nftables) inside a namespace');

  common(addrset.command('list').description('the sets this prefix owns, with owner, state and size').argument('<netns>'))
    .action(async (netns: string, options: CommonOptions) => {
      const rows = await withSets(netns, options, false, (sets) => sets.list());
      printResult(rows, Boolean(options.json), () => listLines(rows));
    });

  common(addrset.command('show').description("one owner's sets and addresses").argument('<netns>').argument('<owner>'))
    .action(async (netns: string, owner: string, options: CommonOptions) => {
      const details = await withSets(netns, options, false, (sets) => sets.inspect(owner));
      printResult(details, Boolean(options.json), () => [
        `owner ${JSON.stringify(details.owner)}: ${details.state}${describeDeadline(details.deadline)}`,
        `${details.v4.name}: ${details.v4.elements.join(' ') || '(empty)'}`,
        `${details.v6.name}: ${details.v6.elements.join(' ') || '(empty)'}`,
      ]);
    });

  common(
    addrset
      .command('gc')
      .description('remove sets whose owner is not live and has no pending deadline ahead')
      .argument('<netns>')
      .option('--live <owner...>', 'owners that are live')
      .option('--live-file <file>', 'live owners: a JSON array of strings, or one per line')
      .option('--dry-run', 'report what would be removed, remove nothing'),
  ).action(async (netns: string, options: CommonOptions & { live?: string[]; liveFile?: string; dryRun?: boolean }) => {
    const live = liveOwners(options);
    const report = await withSets(netns, options, false, (sets) => sets.gc({ live, dryRun: Boolean(options.dryRun) }));
    printResult(report, Boolean(options.json), () => gcLines(report));
  });
}

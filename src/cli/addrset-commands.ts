// `netns addrset list|show|gc NS`: look at and clean up the address sets kept
// in a namespace's nftables table.
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { AddressSets, GcReport, SetInfo } from '../addrset/index.js';
import { ownerHash, setName } from '../addrset/naming.js';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { EXIT_USAGE, printResult } from './output.js';

interface CommonOptions {
  table: string;
  prefix: string;
  backend: 'netlink' | 'nft';
  json?: boolean;
}

interface GcCommandOptions extends CommonOptions {
  live?: string[];
  liveFile?: string;
  all?: boolean;
  dryRun?: boolean;
  wait: string;
}

// A bad --table, --prefix or --wait is a usage error (exit 2), like the others.
function asUsageError(error: unknown): never {
  if ((error as { code?: unknown } | null)?.code === ErrorCodes.ADDRSET_INVALID_OPTION) Object.assign(error as object, { exitCode: EXIT_USAGE });
  throw error;
}

async function withSets<T>(netns: string, options: CommonOptions & { wait?: string }, readOnly: boolean, use: (sets: AddressSets) => Promise<T>): Promise<T> {
  const lockTimeoutMs = options.wait === undefined ? undefined : Number(options.wait);
  // Loaded here, not at the top: `netns help` and the other commands do not pay for it.
  const { AddressSets } = await import('../addrset/index.js');
  const sets = await AddressSets.open({ netns, table: options.table, prefix: options.prefix, backend: options.backend, readOnly, lockTimeoutMs }).catch(asUsageError);
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

function common(command: Command): Command {
  return command
    .requiredOption('-t, --table <table>', 'the inet table holding the sets')
    .option('--prefix <prefix>', 'set-name prefix of the owning instance', 'as')
    .addOption(new Option('--backend <backend>', 'how to reach nftables: netlink, or the nft binary').choices(['netlink', 'nft']).default('netlink'))
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

/** What a live file names, and whether it named them one per line (a JSON array can name any owner). */
interface LiveFile {
  owners: string[];
  perLine: boolean;
}

/** A live file: a JSON array of strings, or one owner per line (CRLF, blank lines and # comments allowed). */
function readLiveFile(file: string): LiveFile {
  const invalid = (why: string, cause?: unknown) =>
    Object.assign(netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, `--live-file ${file}: ${why}`, cause === undefined ? {} : { cause }), { exitCode: EXIT_USAGE });
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    throw invalid(`cannot read it (${(error as Error).message})`, error);
  }
  // A file that is not text, or JSON that is not an array, would become made-up
  // owners: gc would then keep none of the real ones.
  if (/[\0\uFFFD]/.test(text)) throw invalid('not UTF-8 text; expected a JSON array of strings or one owner per line');
  if (/^\s*["{[]/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw invalid(`not JSON (${(error as Error).message}); expected a JSON array of strings or one owner per line`, error);
    }
    if (Array.isArray(parsed) && parsed.every((owner) => typeof owner === 'string')) return { owners: parsed as string[], perLine: false };
    throw invalid('expected a JSON array of strings or one owner per line');
  }
  return { owners: ownersPerLine(text), perLine: true };
}

function ownersPerLine(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Whether one line of a live file can name `owner` (not one that starts with #, has spaces around it or a line break). */
function lineCanName(owner: string): boolean {
  const read = ownersPerLine(owner);
  return read.length === 1 && read[0] === owner;
}

/** The live owners gc must keep. Removing every unowned set takes an explicit --all. */
function liveOwners(options: GcCommandOptions): LiveFile {
  const file = options.liveFile === undefined ? { owners: [], perLine: false } : readLiveFile(options.liveFile);
  const owners = [...(options.live ?? []), ...file.owners];
  if (options.all) {
    if (owners.length > 0) {
      throw Object.assign(netnsError(ErrorCodes.ADDRSET_INVALID_OPTION, '--all means no owner is live: it cannot go with --live or --live-file'), { exitCode: EXIT_USAGE });
    }
    return { owners: [], perLine: false };
  }
  if (owners.length === 0) {
    const given = options.liveFile === undefined ? 'no --live or --live-file was given' : `${options.liveFile} names no owner`;
    const error = netnsError(ErrorCodes.ADDRSET_LIVE_REQUIRED, `${given}: gc would remove every set; pass the live owners, or --all to remove every set no process holds live`);
    throw Object.assign(error, { exitCode: EXIT_USAGE });
  }
  return { owners, perLine: file.perLine };
}

export function addAddrsetCommands(program: Command): void {
  const addrset = program.command('addrset').description('per-owner address sets (nftables) inside a namespace');

  common(addrset.command('list').description('the sets this prefix owns, with owner, state and size').argument('<netns>'))
    .action(async (netns: string, options: CommonOptions) => {
      const rows = await withSets(netns, options, true, (sets) => sets.list());
      printResult(rows, Boolean(options.json), () => listLines(rows));
    });

  common(addrset.command('show').description("one owner's sets and addresses").argument('<netns>').argument('<owner>'))
    .action(async (netns: string, owner: string, options: CommonOptions) => {
      const details = await withSets(netns, options, true, (sets) => sets.inspect(owner));
      printResult(details, Boolean(options.json), () => [
        `owner ${JSON.stringify(details.owner)}: ${details.state}${describeDeadline(details.deadline)}`,
        `${details.v4.name}: ${details.v4.elements.join(' ') || '(empty)'}`,
        `${details.v6.name}: ${details.v6.elements.join(' ') || '(empty)'}`,
      ]);
    });

  common(
    addrset
      .command('gc')
      .description('remove sets whose owner is not live and has no pending deadline ahead (needs --live, --live-file or --all)')
      .argument('<netns>')
      .option('--live <owner...>', 'owners that are live')
      .option('--live-file <file>', 'live owners: a JSON array of strings, or one per line (# comments)')
      .option('--all', 'no owner is live: remove every set of this prefix with no deadline ahead')
      .option('--dry-run', 'report what would be removed, remove nothing')
      .option('--wait <ms>', 'how long to wait for the table\'s writer (an agent) to let go', '0'),
  ).action(async (netns: string, options: GcCommandOptions) => {
    const { owners: live, perLine } = liveOwners(options);
    const report = await withSets(netns, options, false, async (sets) => {
      const rows = await sets.list();
      refuseUnknownLiveList(sets.prefix, rows, live, options);
      if (perLine) refuseUnnameableOwners(rows, live, options.liveFile!);
      return sets.gc({ live, dryRun: Boolean(options.dryRun) });
    });
    printResult(report, Boolean(options.json), () => gcLines(report));
  });
}

// A live list that names none of the owners the table records is almost
// surely the wrong list (another table's, a mangled file): gc would remove
// every recorded owner. That takes --all, said on purpose. Owners are told by
// their set names, made from the owner's hash: one too long for its record is
// recorded by hash only, and listed with no name.
function refuseUnknownLiveList(prefix: string, rows: SetInfo[], live: string[], options: GcCommandOptions): void {
  if (options.all) return;
  const recorded = new Set(rows.map((row) => hashOfSetName(prefix, row.name)));
  if (recorded.size === 0 || live.some((owner) => recorded.has(hashOfSetName(prefix, setName(prefix, 4, ownerHash(owner)))))) return;
  const error = netnsError(
    ErrorCodes.ADDRSET_LIVE_REQUIRED,
    `none of the ${live.length} live owners given has sets in table ${options.table}: gc would remove all ${recorded.size} recorded owners; check the list, or pass --all to remove every set no process holds live`,
  );
  throw Object.assign(error, { exitCode: EXIT_USAGE });
}

/** The part of a set name after `<prefix><family>`: the same for an owner's two sets. */
function hashOfSetName(prefix: string, name: string): string {
  return name.slice(prefix.length + 1);
}

// A line cannot name some owners (one read as a comment, trimmed, or split in
// two): a file meant to name one leaves it out, and gc would remove its sets.
// Such an owner recorded in the table, and not live otherwise, takes a JSON list.
function refuseUnnameableOwners(rows: SetInfo[], live: string[], file: string): void {
  const named = new Set(live);
  const unnameable = [...new Set(rows.flatMap((row) => (row.owner === null || named.has(row.owner) || lineCanName(row.owner) ? [] : [row.owner])))];
  if (unnameable.length === 0) return;
  const error = netnsError(
    ErrorCodes.ADDRSET_INVALID_OPTION,
    `--live-file ${file} has one owner per line, and no line can name ${unnameable.map((owner) => JSON.stringify(owner)).join(', ')} (recorded in the table): gc would remove them; give the live owners as a JSON array of strings`,
  );
  throw Object.assign(error, { exitCode: EXIT_USAGE });
}

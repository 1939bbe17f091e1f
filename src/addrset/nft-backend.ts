// The real backend: runs `nft` inside the target namespace with the
// transaction on stdin, and lists our table as JSON. Running nft goes through
// one seam (NftExec), so that the parsing and error mapping here can be
// tested without privileges.
import { ErrorCodes, netnsError, toolMissing, type ErrorCode, type NetnsError } from '../core/errors.js';
import { execFileIn, type CommandFailedError } from '../io/spawn.js';
import type { NetNS } from '../netns.js';
import { entryFromNft, type Family } from './addresses.js';
import { emptyView, wantsElements, type AddrsetBackend, type KernelSet, type KernelView, type ReadOptions, type WriterLock } from './backend.js';
import type { Op, TableRef } from './ops.js';
import { renderJson, renderText } from './render.js';
import { lockTable } from './table-lock.js';

const FAMILY_OF_TYPE: Record<string, Family> = { ipv4_addr: 4, ipv6_addr: 6 };
// nft enlarges its netlink socket with SO_SNDBUFFORCE, which needs CAP_NET_ADMIN
// in the initial user namespace; without it (a rootless sandbox) a batch over
// wmem_default (~3000 elements) fails. The netlink backend falls back to SO_SNDBUF.
const TOO_LONG_HINT =
  ' (the batch is larger than nft could make its netlink socket: in a user namespace nft cannot force its buffer size; the default netlink backend has no such limit)';

/** nft's words for a kernel refusal, the code it becomes, and what to add to nft's message. */
const KERNEL_ERRORS: [RegExp, ErrorCode, string?][] = [
  [/Device or resource busy/, 'EBUSY'],
  [/No such file or directory/, 'ENOENT'],
  [/element does not exist/, 'ENOENT'], // nft's own check, against its cache, for an interval set
  [/File exists/, 'EEXIST'],
  [/Operation not permitted/, 'EPERM'],
  [/interval overlaps/, ErrorCodes.ADDRSET_OVERLAP],
  [/Message too long/, 'EMSGSIZE', TOO_LONG_HINT],
];

export interface NftOutput {
  stdout: string;
  stderr: string;
  /** nft's exit status. */
  code: number;
}

/**
 * Runs nft with `args` and `input` on its stdin; `inheritFd` (the writer
 * lock) stays open in the nft process until it exits. Rejects only when nft
 * could not be run at all (ERR_NETNS_NFT_MISSING when it is not installed).
 */
export type NftExec = (args: string[], input: string, inheritFd: number | null) => Promise<NftOutput>;

/** The one error for a missing `nft`, naming the package to install. */
export function nftMissing(cause?: unknown): NetnsError {
  return toolMissing(ErrorCodes.NFT_MISSING, 'nft', 'nftables', cause);
}

/** nft run inside `ns`, as the package does by default. */
export function nftIn(ns: NetNS): NftExec {
  return async (args, input, inheritFd) => {
    try {
      const { stdout, stderr } = await execFileIn(ns, 'nft', args, { input }, inheritFd === null ? [] : [inheritFd]);
      return { stdout, stderr, code: 0 };
    } catch (error) {
      const failed = error as Partial<CommandFailedError>;
      if (failed.code === 'ENOENT') throw nftMissing(error);
      if (failed.code !== ErrorCodes.COMMAND_FAILED || typeof failed.exitCode !== 'number') throw error;
      return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: failed.exitCode };
    }
  };
}

export class NftBackend implements AddrsetBackend {
  readonly #ns: NetNS;
  readonly #ref: TableRef;
  readonly #mode: 'text' | 'json';
  readonly #exec: NftExec;

  private constructor(ns: NetNS, ref: TableRef, mode: 'text' | 'json', exec: NftExec) {
    this.#ns = ns;
    this.#ref = ref;
    this.#mode = mode;
    this.#exec = exec;
  }

  /** Checks nft is there and picks text input unless nft's text grammar cannot name the table. */
  static async create(ns: NetNS, ref: TableRef, exec: NftExec = nftIn(ns)): Promise<NftBackend> {
    await run(exec, ['--version'], '');
    const probe = await exec(['--check', '-f', '-'], `add table ${ref.family} ${ref.table}\n`, null);
    return new NftBackend(ns, ref, probe.code === 0 ? 'text' : 'json', exec);
  }

  get mode(): 'text' | 'json' {
    return this.#mode;
  }

  async apply(ops: Op[], lock: WriterLock): Promise<void> {
    // nft's `add table` sends flags 0, which wakes a dormant table (its chains start to filter): one that is
    // there is left as it is. Only open() and a resync add the table, so the look costs them alone.
    const tableThere = ops.some((op) => op.op === 'addTable') && (await this.#listing(['-j', '-t', '-f', '-'])) !== undefined;
    const sent = tableThere ? ops.filter((op) => op.op !== 'addTable') : ops;
    if (this.#mode === 'text') await run(this.#exec, ['-f', '-'], renderText(this.#ref, sent), lock.fd);
    else await run(this.#exec, ['-j', '-f', '-'], renderJson(this.#ref, sent), lock.fd);
  }

  lock({ timeoutMs }: { timeoutMs: number }): Promise<WriterLock> {
    return lockTable({ inode: this.#ns.inode, path: this.#ns.path, table: this.#ref.table }, timeoutMs);
  }

  async read({ elements, registry }: ReadOptions): Promise<KernelView> {
    const { family, table } = this.#ref;
    const items = await this.#listing(elements !== false ? ['-j', '-f', '-'] : ['-j', '-t', '-f', '-']);
    if (items === undefined) return emptyView();
    const view = parseListing(items, registry, elements);
    if (elements === false && view.sets.has(registry)) {
      // terse listings drop elements, and the registry's elements are the records
      const records = await run(this.#exec, ['-j', '-f', '-'], listCommand({ set: { family, table, name: registry } }));
      view.records = parseListing(parseItems(records), registry, false).records;
    }
    view.sets.delete(registry);
    return view;
  }

  /** The items of the table's nft JSON listing, or undefined when the table is not there. */
  async #listing(args: string[]): Promise<NftItem[] | undefined> {
    const { family, table } = this.#ref;
    let stdout: string;
    try {
      stdout = await run(this.#exec, args, listCommand({ table: { family, name: table } }));
    } catch (error) {
      if ((error as NetnsError).code === 'ENOENT') return undefined;
      throw error;
    }
    return parseItems(stdout);
  }
}

function listCommand(what: object): string {
  return JSON.stringify({ nftables: [{ list: what }] });
}

type NftItem = Record<string, Record<string, unknown>>;

/** nft's JSON output as its items; nft 1.0.6 prints the flags of a table that has some (dormant) badly: cut short, or a wrong value. */
function parseItems(stdout: string): NftItem[] {
  try {
    const items = (JSON.parse(stdout) as { nftables: NftItem[] }).nftables;
    if (!Array.isArray(items)) throw new TypeError('no "nftables" array');
    return items;
  } catch (error) {
    const flagged = /\{"table": \{[^{}]*"flags":/.test(stdout) ? ' (nft 1.0.6 prints a table with flags, such as a dormant one, badly in JSON: use the netlink backend)' : '';
    throw netnsError(ErrorCodes.NFT, `nft printed a listing that is not nft JSON: ${(error as Error).message}${flagged}`, { cause: error });
  }
}

function parseListing(items: NftItem[], registry: string, elements: ReadOptions['elements']): KernelView {
  const view: KernelView = { tableExists: true, sets: new Map(), records: new Map() };
  for (const item of items) {
    const set = item.set as { name: string; type: string; flags?: string[]; elem?: unknown[] } | undefined;
    if (!set) continue;
    if (set.name === registry) {
      view.sets.set(registry, { name: registry, family: 'other', elements: null });
      for (const element of set.elem ?? []) {
        const elem = (element as { elem?: { val: string; comment?: string } }).elem;
        if (elem) view.records.set(elem.val, elem.comment ?? '');
        else if (typeof element === 'string') view.records.set(element, '');
      }
      continue;
    }
    // Ours are interval sets with no other flag: a set of another shape under our name is someone else's.
    const ours = set.flags?.length === 1 && set.flags[0] === 'interval';
    const family = ours ? (FAMILY_OF_TYPE[set.type] ?? 'other') : 'other';
    const kernelSet: KernelSet = { name: set.name, family, elements: null };
    if (family !== 'other' && wantsElements(elements, set.name)) {
      kernelSet.elements = (set.elem ?? []).flatMap((e) => entryFromNft(e, family) ?? []);
    }
    view.sets.set(set.name, kernelSet);
  }
  return view;
}

async function run(exec: NftExec, args: string[], input: string, inheritFd: number | null = null): Promise<string> {
  const output = await exec(args, input, inheritFd);
  if (output.code === 0) return output.stdout;
  throw nftError(args, output);
}

function nftError(args: string[], output: NftOutput): NetnsError {
  const firstError = output.stderr.split('\n').find((line) => line.startsWith('Error:')) ?? output.stderr.trim();
  const [, code = ErrorCodes.NFT, hint = ''] = KERNEL_ERRORS.find(([pattern]) => pattern.test(output.stderr)) ?? [];
  const error = netnsError(code, `nft ${args.join(' ')}: ${firstError.replace(/^Error: /, '') || `exit ${output.code}`}${hint}`);
  return Object.assign(error, { stderr: output.stderr });
}

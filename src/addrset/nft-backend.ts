// The real backend: runs `nft` inside the target namespace (through NetNS.spawn)
// with the transaction on stdin, and lists our table as JSON.
import { netnsError, type NetnsError } from '../errors.js';
import type { NetNS } from '../netns.js';
import { entryFromNft, type Family } from './addresses.js';
import { emptyView, type AddrsetBackend, type KernelSet, type KernelView } from './backend.js';
import { AddrsetCodes } from './codes.js';
import type { Op, TableRef } from './ops.js';
import { renderJson, renderText } from './render.js';

const FAMILY_OF_TYPE: Record<string, Family> = { ipv4_addr: 4, ipv6_addr: 6 };
const KERNEL_ERRORS: [RegExp, string][] = [
  [/Device or resource busy/, 'EBUSY'],
  [/No such file or directory/, 'ENOENT'],
  [/File exists/, 'EEXIST'],
  [/Operation not permitted/, 'EPERM'],
  [/interval overlaps/, AddrsetCodes.OVERLAP],
];

interface NftOutput {
  stdout: string;
  stderr: string;
  code: number | null;
}

export class NftBackend implements AddrsetBackend {
  readonly #ns: NetNS;
  readonly #ref: TableRef;
  readonly #mode: 'text' | 'json';

  private constructor(ns: NetNS, ref: TableRef, mode: 'text' | 'json') {
    this.#ns = ns;
    this.#ref = ref;
    this.#mode = mode;
  }

  /** Checks nft is there and picks text input unless nft's text grammar cannot name the table. */
  static async create(ns: NetNS, ref: TableRef): Promise<NftBackend> {
    await run(ns, ['--version'], '');
    const probe = await runRaw(ns, ['--check', '-f', '-'], `add table ${ref.family} ${ref.table}\n`);
    return new NftBackend(ns, ref, probe.code === 0 ? 'text' : 'json');
  }

  get mode(): 'text' | 'json' {
    return this.#mode;
  }

  async apply(ops: Op[]): Promise<void> {
    if (this.#mode === 'text') await run(this.#ns, ['-f', '-'], renderText(this.#ref, ops));
    else await run(this.#ns, ['-j', '-f', '-'], renderJson(this.#ref, ops));
  }

  async read({ elements, registry }: { elements: boolean; registry: string }): Promise<KernelView> {
    const { family, table } = this.#ref;
    const list = (what: object) => JSON.stringify({ nftables: [{ list: what }] });
    let stdout: string;
    try {
      stdout = await run(this.#ns, elements ? ['-j', '-f', '-'] : ['-j', '-t', '-f', '-'], list({ table: { family, name: table } }));
    } catch (error) {
      if ((error as NetnsError).code === 'ENOENT') return emptyView();
      throw error;
    }
    const view = parseListing(stdout, registry, elements);
    if (!elements && view.sets.has(registry)) {
      // terse listings drop elements, and the registry's elements are the records
      const records = await run(this.#ns, ['-j', '-f', '-'], list({ set: { family, table, name: registry } }));
      view.records = parseListing(records, registry, false).records;
    }
    view.sets.delete(registry);
    return view;
  }
}

function parseListing(stdout: string, registry: string, withElements: boolean): KernelView {
  const view: KernelView = { tableExists: true, sets: new Map(), records: new Map() };
  const items = (JSON.parse(stdout) as { nftables: Record<string, Record<string, unknown>>[] }).nftables;
  for (const item of items) {
    const set = item.set as { name: string; type: string; elem?: unknown[] } | undefined;
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
    const family = FAMILY_OF_TYPE[set.type] ?? 'other';
    const kernelSet: KernelSet = { name: set.name, family, elements: null };
    if (withElements && family !== 'other') {
      kernelSet.elements = (set.elem ?? []).flatMap((e) => entryFromNft(e, family)?.text ?? []);
    }
    view.sets.set(set.name, kernelSet);
  }
  return view;
}

async function run(ns: NetNS, args: string[], input: string): Promise<string> {
  const output = await runRaw(ns, args, input);
  if (output.code === 0) return output.stdout;
  throw nftError(args, output);
}

async function runRaw(ns: NetNS, args: string[], input: string): Promise<NftOutput> {
  try {
    const { stdout, stderr } = await ns.execFile('nft', args, { input });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string; code?: unknown };
    if (failed.code === 'ENOENT') throw netnsError(AddrsetCodes.NFT_MISSING, 'nft (package nftables) is not installed', { cause: error });
    if (typeof failed.code !== 'number') throw error;
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: failed.code };
  }
}

function nftError(args: string[], output: NftOutput): NetnsError {
  const firstError = output.stderr.split('\n').find((line) => line.startsWith('Error:')) ?? output.stderr.trim();
  const code = KERNEL_ERRORS.find(([pattern]) => pattern.test(output.stderr))?.[1] ?? AddrsetCodes.NFT;
  const error = netnsError(code, `nft ${args.join(' ')}: ${firstError.replace(/^Error: /, '') || `exit ${output.code}`}`);
  return Object.assign(error, { stderr: output.stderr });
}

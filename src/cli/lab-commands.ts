// `netns lab up|down|status|exec|graph|impair|link|partition|heal|matrix`:
// the lab of netns/testing from a topology file, as containerlab's
// deploy/destroy/inspect/exec and `tools netem`. A lab outlives `up` (its
// namespaces are named <prefix><lab>.<node>, where `ip netns` shows them)
// until `down NAME`, which needs the name spelled out.
import type { Command } from 'commander';
import { ErrorCodes, netnsError } from '../core/errors.js';
import type { Impairment } from '../testing/lab/units.js';
import type { Lab } from '../testing/lab/lab.js';
import { assertNotReplaced, down, replacedNamespaces, stampOf } from './lab-down.js';
import { chooseLab, createLabFile, type DamagedLab, inspectLab, isDamaged, labNames, loadLab, type NsStamp, removeLab, saveLab, type StoredLab, underLabLock } from './lab-state.js';
import { printResult, usageError } from './output.js';

/** The prefix of a CLI lab's namespaces when its file gives none: not the fixtures' (sweep() never takes a lab for a crashed test). */
const CLI_PREFIX = 'nslab-';

/** The longest --timeout of `matrix`: a minute per try is already no lab's. */
const MAX_TIMEOUT_MS = 60_000;


async function up(file: string, options: { name?: string; json?: boolean }): Promise<void> {
  const { loadLabFile } = await import('../testing/lab/file.js');
  const { checkLabSpec } = await import('../testing/lab/spec.js');
  const { planLab } = await import('../testing/lab/plan.js');
  const { createLab, namedLabNamespace } = await import('../testing/lab/lab.js');
  const loaded = loadLabFile(file);
  const name = options.name ?? loaded.name;
  const spec = { prefix: CLI_PREFIX, ...loaded.spec };
  const plan = planLab(checkLabSpec(spec)); // a bad file is refused before anything, the state file included
  const names = Object.fromEntries(plan.nodes.map(({ key }) => [key, namedLabNamespace(plan.prefix, name, key)]));
  await underLabLock(name, async () => {
    const started = String(BigInt(Date.now() - CLOCK_SLACK_MS) * 1_000_000n);
    const stored: StoredLab = { name, file, building: true, started, state: { plan, names, impairments: [], down: [], partitions: [], nextPartition: 1 } };
    createLabFile(stored); // before building: a killed `up` leaves what `down` needs (EEXIST: the lab is up)
    let lab: Lab;
    try {
      refuseTakenNames(name, names);
      lab = await createLab(spec, { name, keep: true });
    } catch (error) {
      removeLab(name);
      throw error;
    }
    try {
      saveLab({ ...stored, building: false, state: lab.state(), identities: stampsOf(lab, names) });
    } finally {
      lab.close();
    }
  });
  printResult({ name, names }, Boolean(options.json), () => [`lab ${name} is up:`, ...Object.entries(names).map(([node, ns]) => `  ${node.padEnd(12)} ${ns}`)]);
}

/** A namespace's stamp comes from the kernel's coarse clock, a tick behind Date.now() at most. */
const CLOCK_SLACK_MS = 50;

/**
 * Refuses a lab one of whose names is taken (EEXIST): by someone's namespace, or by another lab's under another
 * prefix (prefix `p-x-` with lab `y` and prefix `p-` with lab `x-y` both name node a `p-x-y.a`).
 */
function refuseTakenNames(lab: string, names: Record<string, string>): void {
  const taken = Object.values(names).filter((ns) => stampOf(ns) !== undefined);
  if (taken.length > 0) throw netnsError('EEXIST', `lab ${lab} needs namespaces that already exist: ${taken.join(', ')} (another lab's, or not a lab's): not made`);
}

/** What each node's namespace is, checked against the one the lab holds open (so it is the lab's). */
function stampsOf(lab: Lab, names: Record<string, string>): Record<string, NsStamp> {
  const stamps: Record<string, NsStamp> = {};
  for (const [key, ns] of Object.entries(lab.nodes)) {
    const stamp = stampOf(names[key]!);
    if (stamp === undefined || !ns.equals(stamp)) throw netnsError(ErrorCodes.FIXTURE, `namespace ${ns.path} was replaced while the lab was being built`);
    stamps[key] = stamp;
  }
  return stamps;
}

/** Finds the lab again, runs `change` holding the lab's lock, and keeps what it changed. */
async function withLab<T>(name: string | undefined, change: (lab: Lab) => Promise<T>): Promise<T> {
  const { Lab } = await import('../testing/lab/lab.js');
  const chosen = chooseLab(name);
  return underLabLock(chosen, async () => {
    const stored = await loadLab(chosen);
    if (stored.building) throw netnsError(ErrorCodes.FIXTURE, `lab ${stored.name} was never finished (its \`up\` died): netns lab down ${stored.name}`);
    assertNotReplaced(stored);
    const lab = await Lab.attach(stored.state);
    try {
      return await change(lab);
    } finally {
      saveLab({ ...stored, state: lab.state() });
      lab.close();
    }
  });
}

function statusLines(stored: StoredLab | DamagedLab, present: Set<string>): string[] {
  if (isDamaged(stored)) return [`lab ${stored.name}: damaged state file (${stored.damaged}): netns lab down ${stored.name} removes it`];
  const { plan, names, impairments, down: linksDown, partitions } = stored.state;
  const replaced = new Set(replacedNamespaces(stored));
  const lines = [`lab ${stored.name} (from ${stored.file})${stored.building ? ' — never finished: netns lab down it' : ''}`];
  for (const { key, kind } of plan.nodes) {
    const ns = names[key]!;
    lines.push(`  ${kind.padEnd(7)} ${key.padEnd(12)} ${ns}${!present.has(ns) ? ' (missing)' : replaced.has(ns) ? ' (replaced since up: not the lab\'s)' : ''}`);
  }
  for (const { a, b } of plan.links) {
    const state = linksDown.includes(`${a.node}>${b.node}`) ? 'down' : 'up';
    lines.push(`  link    ${a.node}:${a.iface} ${a.addresses.join(' ')} -- ${b.node}:${b.iface} ${b.addresses.join(' ')} ${state}`);
  }
  for (const [from, to, impairment] of impairments) lines.push(`  impair  ${from} -> ${to}: ${Object.entries(impairment).map(([k, v]) => `${k} ${String(v)}`).join(', ')}`);
  for (const { id, sides } of partitions) lines.push(`  cut     #${id}: ${sides[0].join(',')} | ${sides[1].join(',')}`);
  return lines;
}

async function status(name: string | undefined, options: { json?: boolean }): Promise<void> {
  const { listNamespaces } = await import('../lifecycle.js');
  const present = new Set(listNamespaces().map((entry) => entry.name));
  const labs = await Promise.all((name === undefined ? labNames() : [name]).map(inspectLab));
  printResult(labs, Boolean(options.json), () => (labs.length === 0 ? ['no lab is up'] : labs.flatMap((lab) => statusLines(lab, present))));
}

async function exec(node: string, command: string[], options: { lab?: string }): Promise<void> {
  const { NetNS } = await import('../netns.js');
  const { runForwarded } = await import('./exec-in.js');
  const stored = await loadLab(chooseLab(options.lab));
  assertNotReplaced(stored);
  const ns = stored.state.names[node];
  if (ns === undefined || !Object.hasOwn(stored.state.names, node)) throw usageError(`lab ${stored.name} has no node ${JSON.stringify(node)} (nodes: ${Object.keys(stored.state.names).join(', ')})`);
  // commander keeps the `--` that ends our options when options pass through.
  const [program, ...args] = command[0] === '--' ? command.slice(1) : command;
  if (program === undefined) throw usageError('lab exec needs a command after the node');
  // etc: as `ip netns exec`, /sys shows the node's interfaces and /etc/netns/NAME is bound over /etc; named as the node, with its own dirs, as a machine.
  const { dirsToLay } = await import('../testing/lab/private-dirs.js');
  const dirs = stored.state.plan.nodes.find(({ key }) => key === node)?.dirs;
  await runForwarded(NetNS.open(ns), program!, args, { etc: true, hostname: node, dirs: dirs ? dirsToLay(ns, dirs) : [] });
}

/** A whole number in [min, max] given on the command line, else a usage error. */
function wholeNumber(text: string, what: string, min: number, max: number): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) throw usageError(`${what} takes a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

function familyOf(text: string): 4 | 6 {
  if (text !== '4' && text !== '6') throw usageError(`--family takes 4 or 6, got ${JSON.stringify(text)}`);
  return Number(text) as 4 | 6;
}

function impairmentOf(options: Record<string, string | undefined>): Impairment {
  const impairment: Impairment = {};
  for (const key of ['rate', 'delay', 'jitter'] as const) if (options[key] !== undefined) impairment[key] = options[key];
  for (const key of ['loss', 'duplicate'] as const) {
    if (options[key] === undefined) continue;
    // A plain decimal only: Number() would take '' for 0 and '0x10' for 16.
    const match = /^(\d+(?:\.\d+)?)%?$/.exec(String(options[key]));
    if (!match) throw usageError(`--${key} takes a percent (5 or 5%), got ${JSON.stringify(options[key])}`);
    impairment[key] = Number(match[1]);
  }
  return impairment;
}

function addInspectCommands(lab: Command): void {
  lab
    .command('status')
    .description('what each lab is made of: nodes, links (up or down), impairments, partitions')
    .argument('[name]', 'one lab (default: every lab that is up)')
    .option('--json', 'print JSON')
    .action(status);
  lab
    .command('graph')
    .description('the lab as a picture: Mermaid (default) or Graphviz DOT')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .option('--format <format>', 'mermaid or dot', 'mermaid')
    .action((options: { lab?: string; format: string }) => withLab(options.lab, async (l) => void process.stdout.write(l.picture(options.format as 'mermaid'))));
  lab
    .command('matrix')
    .description('who reaches whom (as pingAll): every host and router tries every other')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .option('--family <family>', '4 or 6', '4')
    .option('--timeout <ms>', 'how long each try may take', '1000')
    .option('--json', 'print JSON')
    .action((options: { lab?: string; family: string; timeout: string; json?: boolean }) => {
      const family = familyOf(options.family);
      const timeout = wholeNumber(options.timeout, '--timeout', 1, MAX_TIMEOUT_MS);
      return withLab(options.lab, async (l) => {
        const matrix = await l.connectivity({ family, timeout });
        printResult({ nodes: matrix.nodes, reachable: matrix.reachable, dropped: matrix.dropped }, Boolean(options.json), () => [String(matrix)]);
      });
    });
}

function addChangeCommands(lab: Command): void {
  lab
    .command('impair')
    .description('impair what FROM sends to TO (replacing what was set that way); --clear takes it off')
    .argument('<from>')
    .argument('<to>')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .option('--rate <rate>', 'e.g. 10mbit, 512kbit')
    .option('--delay <time>', 'e.g. 20ms (needs sch_netem)')
    .option('--jitter <time>', 'e.g. 5ms (needs sch_netem)')
    .option('--loss <percent>', 'e.g. 5')
    .option('--duplicate <percent>', 'e.g. 1 (needs sch_netem)')
    .option('--clear', 'take the impairment off')
    .action((from: string, to: string, options: Record<string, string | undefined> & { lab?: string; clear?: boolean }) => {
      const impairment = impairmentOf(options); // a bad number is a usage error, before any lab is looked up
      return withLab(options.lab, (l) => (options.clear ? l.clearImpairment(from, to) : l.impair(from, to, impairment)));
    });
  lab
    .command('link')
    .description('take the link between A and B down, or bring it up with its addresses and routes')
    .argument('<a>')
    .argument('<b>')
    .argument('<state>', 'up or down')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .action((a: string, b: string, state: string, options: { lab?: string }) => {
      if (state !== 'up' && state !== 'down') throw usageError(`link state must be up or down, got ${JSON.stringify(state)}`);
      return withLab(options.lab, (l) => (state === 'up' ? l.linkUp(a, b) : l.linkDown(a, b)));
    });
  lab
    .command('partition')
    .description('cut the nodes of one side (a,b) off from the other (c,d), both ways; prints its id')
    .argument('<sideA>', 'comma-separated nodes')
    .argument('<sideB>', 'comma-separated nodes')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .action((sideA: string, sideB: string, options: { lab?: string }) =>
      withLab(options.lab, async (l) => void process.stdout.write(`${(await l.partition(sideA.split(','), sideB.split(','))).id}\n`)),
    );
  lab
    .command('heal')
    .description('heal one partition by id, or all of them')
    .argument('[id]')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .action((id: string | undefined, options: { lab?: string }) => {
      const which = id === undefined ? undefined : wholeNumber(id, 'heal', 1, Number.MAX_SAFE_INTEGER);
      return withLab(options.lab, (l) => l.heal(which));
    });
}

export function addLabCommands(program: Command): void {
  const lab = program.command('lab').description('network labs from a topology file (JSON or YAML): hosts, switches, routers, impairments, partitions (needs root)');
  lab
    .command('up')
    .description('build the lab a file declares; it stays until `netns lab down NAME`')
    .argument('<file>', 'a .json, .yaml or .yml topology')
    .option('--name <name>', "the lab's name (default: the file's `name`, else its file name)")
    .option('--json', 'print JSON')
    .action(up);
  lab.command('down').description('delete the lab: every namespace it made, and its state').argument('<name>', 'the lab (required: nothing is deleted by default)').action(down);
  lab
    .command('exec')
    .description('run a command in a node of the lab, as `ip netns exec`')
    .option('--lab <name>', 'which lab (default: the only one up)')
    .argument('<node>')
    .argument('<command...>', 'after --')
    .passThroughOptions()
    .action(exec);
  addInspectCommands(lab);
  addChangeCommands(lab);
}

// createLab: hosts, routers and switches in namespaces of their own, joined
// by veth pairs, addressed and routed, with run-time impairments, link
// down/up, partitions, captures, a connectivity matrix and a picture.
// Everything carries a prefix unique to this process and is removed by
// delete(), on failure half-way, at process exit and on a signal that ends
// the process (unless kept: the CLI's labs outlive `netns lab up`); what a
// SIGKILL leaves, the next createLab of the prefix removes.
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onExit } from 'signal-exit';
import { ErrorCodes, kindOf, netnsError, shownValue, type NetnsError } from '../../core/errors.js';
import { refuseUnknownKeys } from '../../core/known-keys.js';
import { assertValidName, checkRunDir, mountableRunDir, NETNS_RUN_DIR, type RunDirOption } from '../../core/names.js';
import { ownOptions } from '../../core/own.js';
import { MAX_TIMER_MS } from '../../core/timer-limit.js';
import { openNetlink, type Route } from '../../netlink/index.js';
import type { ExecFileOptions, ExecFileResult, NetnsSpawnOptions, PrivateDir } from '../../io/spawn.js';
import { NetNS } from '../../netns.js';
import { capturePackets, type PacketCapture } from '../capture.js';
import { ownerStem } from '../owner.js';
import { sweep } from '../sweep.js';
import { deleteNamespacesSync } from '../run-ip.js';
import { allSettledOrThrow } from './all-settled.js';
import { inNode, makeNamespaces, wireLab, type LabNode } from './build.js';
import { describeMissing, pollUntil, routeProblems, type WaitOptions } from './converge.js';
import { frrAccount, FrrRouter, type FrrAccount } from './frr.js';
import { frrFiles } from './frr-config.js';
import { FRR_DIR_PREFIX } from './frr-orphans.js';
import { untilEndedSync } from './process-end.js';
import type { CheckedFrrSpec } from './frr-spec.js';
import { HostsFiles, removeHostsFolder } from './hosts-file.js';
import { addUplink, configureUplink, machineSubnets, removeUplink } from './nat.js';
import type { PlannedNat } from './nat-plan.js';
import { dirsOnMachine, dirsToLay, makeNodeDirs, removeNodeDirs } from './private-dirs.js';
import { applyImpairment, clearImpairment, type LinkEnd } from './impair.js';
import { connectivity, type ConnectivityMatrix } from './matrix.js';
import { cutOff, reconnect, type LabPartition } from './partition.js';
import { dot, mermaid } from './picture.js';
import { checkLabLimits } from './limits.js';
import { planLab, type LabPlan, type PlannedEnd, type PlannedLink } from './plan.js';
import { checkLabSpec, LAB_KEY, type LabSpec } from './spec.js';
import { checkPlanAndNames, checkRunState } from './state.js';
import { checkImpairment, describeImpairment, type Impairment } from './units.js';

/**
 * How createLab names and keeps what it makes, and where: `runDir` names the
 * namespaces in another run directory than /run/netns (what a user without
 * write access to /run/netns passes, e.g. root of `unshare -Urn --mount`).
 */
export interface LabOptions extends RunDirOption {
  /** Names namespaces `<prefix><name>.<node>` instead of `<prefix><pid>-t<start>-p<pidns>-<random>-<node>`: a lab found again by name (the CLI's). */
  name?: string;
  /** Leave the lab in place when the process exits (default false: removed at exit, as createTestNetwork's). */
  keep?: boolean;
  /**
   * Delete the lab when a signal ends the process (SIGINT, SIGTERM, SIGHUP and
   * the others that kill by default), then die by that signal, as the
   * `signal-exit` package does: only while no other listener of that signal
   * would keep the process alive (default true; false: only at exit; no
   * effect with keep).
   */
  deleteOnSignal?: boolean;
  /**
   * Write /etc/netns/<namespace name>/hosts naming every node's addresses, so
   * that a command run in a node (lab.spawn, `netns lab exec`) reaches the
   * others by name. Default: where the namespaces are in /run/netns (the run
   * directory `ip netns exec` pairs with /etc/netns) and /etc/netns may be
   * written (not by a user namespace's root, as in `netns sandbox`). true: a
   * refused write fails the build.
   */
  hosts?: boolean;
}

/** An impairment in force, as lab.impairments() lists it. */
export interface LabImpairment {
  /** The sending node. */
  from: string;
  /** The node at the link's other end. */
  to: string;
  /** The interface of `from` it is on (its loss is dropped as the other end receives it). */
  interface: string;
  /** As it was given. */
  impairment: Impairment;
  /** "rate 1mbit, loss 5%". */
  text: string;
}

/** Everything needed to find a running lab again from another process (the CLI's state file). */
export interface LabState {
  /** What the lab is made of. */
  plan: LabPlan;
  /** Each node's namespace name. */
  names: Record<string, string>;
  /** The run directory the names are in (absent: /run/netns). */
  runDir?: string;
  /** [from, to, impairment] for each impaired direction. */
  impairments: [string, string, Impairment][];
  /** The links that are down, as "a>b" (a and b as planned). */
  down: string[];
  /** The partitions in force. */
  partitions: LabPartition[];
  /** The id the next partition gets. */
  nextPartition: number;
}

/** Options of lab.connectivity(). */
export interface ConnectivityOptions {
  /** Which addresses to try (default 4). */
  family?: 4 | 6;
  /** How long a pair's probe may take, in ms (default 1000); while none has answered, two more attempts start a third of it apart. */
  timeout?: number;
  /** Which nodes to probe between (default: every host and router). */
  nodes?: string[];
}

const invalid = (message: string): NetnsError => netnsError(ErrorCodes.INVALID_ARG, message);
const pair = (from: string, to: string): string => `${from}>${to}`;

/**
 * A running lab. Node keys are those of the spec; every method is async
 * except the readers, and rejects with a coded error: ERR_NETNS_INVALID_ARG
 * for an unknown node or link, the kernel's code (ERR_NETNS_UNSUPPORTED for a
 * missing qdisc module) with the namespace named in the message.
 */
export class Lab implements AsyncDisposable {
  /** Each node's namespace, with the NetNS I/O methods (connect, spawn, sysctl...). */
  readonly nodes: Record<string, NetNS> = {};
  /** Each node's namespace name in the run directory (`ip -n NAME`, `ip netns exec NAME` where that is /run/netns). */
  readonly names: Record<string, string> = {};
  /** The run directory the namespaces are named in: /run/netns unless createLab was given another. */
  readonly runDir: string;
  /** The plan it was built from: segments, interfaces, addresses, routes. */
  readonly plan: LabPlan;
  /** Each node; one whose namespace this lab made (or attached to) has its `ns`. */
  readonly #nodes = new Map<string, LabNode>();
  readonly #impairments = new Map<string, Impairment>();
  readonly #down = new Set<string>();
  readonly #partitions = new Map<number, LabPartition>();
  #nextPartition = 1;
  readonly #captures = new Set<PacketCapture>();
  /** The last change queued per link direction, link, or the partitions: changes of one thing run one after another. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** The routers running FRR, and the directory of their daemons' files (absent: none runs it). */
  readonly #frr = new Map<string, FrrRouter>();
  #frrDir: string | undefined;
  /** The NAT uplink this lab made, whose machine end delete() removes. */
  #uplink: PlannedNat | undefined;
  /** Each FRR router's daemon logs, kept by delete() when it removes their directory. */
  readonly #keptLogs = new Map<string, Record<string, string>>();
  readonly #onExit = (): void => {
    const killed = [...this.#frr.values()].flatMap((router) => router.killNow());
    deleteNamespacesSync(this.#identities(), this.runDir);
    this.#removeHostsFolders();
    this.#removeNodeDirs();
    // A daemon killed a moment ago may still write there until it has ended; one that outlives the wait leaves the
    // directory in the temp dir rather than throwing, which would end the other exit hooks.
    untilEndedSync(killed);
    try {
      if (this.#frrDir) rmSync(this.#frrDir, { recursive: true, force: true });
    } catch {}
  };
  /** Takes the exit (and signal) hook off again. */
  #unhook = (): void => {};
  #deleted = false;
  /** The hosts files this lab is writing or wrote (absent: none). */
  #hostsFiles: HostsFiles | undefined;

  /** @internal Use createLab() or Lab.attach(). */
  constructor(plan: LabPlan, names: Record<string, string>, keep: boolean, runDir: string, deleteOnSignal = true) {
    checkPlanAndNames(plan, names);
    this.plan = plan;
    this.runDir = runDir;
    for (const { key, kind } of plan.nodes) {
      this.names[key] = names[key]!;
      this.#nodes.set(key, { key, kind, name: names[key]! });
    }
    if (!keep) this.#unhook = deleteOnSignal ? onExit(this.#onExit) : exitOnly(this.#onExit);
  }

  /**
   * @internal Builds the plan, with every node's hosts file if asked, then starts FRR where asked; the caller deletes
   * on failure. `'if-permitted'`: no hosts files where /etc/netns may not be written (a user namespace's root, as in
   * `netns sandbox`).
   */
  async build(hosts: boolean | 'if-permitted', frr: Map<string, CheckedFrrSpec> = new Map(), account?: FrrAccount): Promise<void> {
    const named = hosts === false ? undefined : new HostsFiles(this.plan, Object.values(this.names));
    this.#hostsFiles = named;
    await makeNamespaces([...this.#nodes.values()], this.runDir, named?.writeNext);
    await wireLab(this.plan, this.#nodes, named?.writeNext);
    if (named?.failure && hosts !== false) refusedIfPermitted(named.failure, hosts);
    if (this.plan.nat) {
      await addUplink(this.plan.nat, this.#node(this.plan.nat.node));
      this.#uplink = this.plan.nat; // made: delete() takes it away (a name found taken was someone else's)
      await configureUplink(this.plan.nat, this.#node(this.plan.nat.node));
    }
    for (const { key, dirs } of this.plan.nodes) if (dirs) await makeNodeDirs(this.names[key]!, dirs);
    for (const node of this.#nodes.values()) this.nodes[node.key] = node.ns!;
    for (const link of this.plan.links) {
      for (const [from, to] of [[link.a.node, link.b.node], [link.b.node, link.a.node]] as const) {
        // Own keys only: a node named `constructor` must not find Object.prototype's (a plan may come from JSON).
        if (Object.hasOwn(link.impair, from)) await this.impair(from, to, link.impair[from]!);
      }
    }
    if (frr.size > 0) await this.#startFrr(frr, account!);
  }

  /** Starts every FRR router's daemons, each router in a directory of its own in one of the lab's (frr's: the daemons run as frr). */
  async #startFrr(frr: Map<string, CheckedFrrSpec>, account: FrrAccount): Promise<void> {
    this.#frrDir = await mkdtemp(join(tmpdir(), FRR_DIR_PREFIX));
    await chown(this.#frrDir, account.uid, account.gid);
    for (const key of frr.keys()) this.#frr.set(key, new FrrRouter(this.#node(key), join(this.#frrDir, key)));
    // Every start settled before a failure is thrown: delete() must not stop a router whose daemons are still starting.
    await allSettledOrThrow([...frr].map(([key, spec]) => this.#frr.get(key)!.start(frrFiles(key, spec, this.plan), account)));
  }

  #frrRouter(node: string): FrrRouter {
    this.#node(node);
    const router = this.#frr.get(node);
    if (!router) throw invalid(`node ${node} runs no FRR (routers that do: ${[...this.#frr.keys()].join(', ') || 'none'})`);
    return router;
  }

  /**
   * The logs of an FRR router's daemons, by daemon ({ zebra, ospfd }): what
   * a failing test prints. Async; still there after delete(), which keeps
   * them as it removes their directory.
   */
  async daemonLogs(node: string): Promise<Record<string, string>> {
    const router = this.#frrRouter(node);
    return this.#keptLogs.get(node) ?? router.logs();
  }

  /** The process ids of an FRR router's daemons, by daemon. */
  daemonPids(node: string): Record<string, number> {
    return this.#frrRouter(node).pids();
  }

  /** The directory of an FRR router's daemons: configuration, logs, vty sockets (`vtysh --vty_socket DIR -c 'show ip ospf neighbor'`). */
  daemonDir(node: string): string {
    return this.#frrRouter(node).dir;
  }

  /**
   * Resolves with the first truthy value of `check` (sync or async), tried
   * every `intervalMs` (default 50) until `timeoutMs` (default 30,000);
   * rejects with ETIMEDOUT, or with what `check` throws.
   */
  async waitFor<T>(check: () => T | Promise<T>, options?: WaitOptions): Promise<T> {
    return pollUntil(check, options, 'lab.waitFor', () => 'the check never held');
  }

  /**
   * Resolves when the kernel's IPv4 routes of every FRR router reach every
   * subnet the FRR routers are on (less those of links down) along a shortest
   * way, in routers crossed; rejects with ETIMEDOUT naming which router lacks
   * which prefix, ERR_NETNS_INVALID_ARG in a lab without FRR. (A configuration
   * given as is with costs of its own: use waitFor.)
   */
  async waitConverged(options?: WaitOptions): Promise<void> {
    if (this.#frr.size === 0) throw invalid('waitConverged: no router of this lab runs FRR');
    let missing = new Map<string, string[]>();
    const converged = async (): Promise<boolean> => {
      missing = await this.#routeProblems();
      return describeMissing(missing) === '';
    };
    await pollUntil(converged, options, 'lab.waitConverged', () => describeMissing(missing));
  }

  /** Each FRR router's problems (see routeProblems). */
  async #routeProblems(): Promise<Map<string, string[]>> {
    const problems = new Map<string, string[]>();
    const frrRouters = new Set(this.#frr.keys());
    for (const key of frrRouters) {
      const routes = await inNode(this.#node(key), (nl) => nl.routes.list({ family: 4 }));
      const seen = routes.map((route) => ({ destination: route.destination, gateways: gatewaysOf(route) }));
      problems.set(key, routeProblems(this.plan, frrRouters, this.#down, key, seen));
    }
    return problems;
  }

  /**
   * A running lab found again from its state (lab.state(), as the CLI keeps
   * it): opens each namespace by name in the state's run directory. Async;
   * ENOENT when one is gone, ERR_NETNS_INVALID_ARG for a state of the wrong
   * shape.
   */
  static async attach(state: LabState): Promise<Lab> {
    if (typeof state !== 'object' || state === null) throw invalid(`Lab.attach takes a lab's state(), got ${kindOf(state)}`);
    checkPlanAndNames(state.plan, state.names);
    checkRunState(state as unknown as Record<string, unknown>, state.plan);
    const lab = new Lab(state.plan, state.names, true, checkRunDir(state.runDir));
    try {
      for (const node of lab.#nodes.values()) {
        node.ns = NetNS.open(node.name, { runDir: lab.runDir });
        node.nl = await openNetlink(node.ns);
        lab.nodes[node.key] = node.ns;
      }
    } catch (error) {
      lab.close(); // what was opened before a namespace turned out gone
      throw error;
    }
    for (const [from, to, impairment] of state.impairments) lab.#impairments.set(pair(from, to), impairment);
    for (const key of state.down) lab.#down.add(key);
    for (const partition of state.partitions) lab.#partitions.set(partition.id, partition);
    lab.#nextPartition = state.nextPartition;
    return lab;
  }

  /** What another process needs to find and work this lab (plain JSON data). */
  state(): LabState {
    const impairments = [...this.#impairments].map(([key, impairment]) => [...(key.split('>') as [string, string]), impairment] as [string, string, Impairment]);
    return { plan: this.plan, names: { ...this.names }, runDir: this.runDir, impairments, down: [...this.#down], partitions: [...this.#partitions.values()], nextPartition: this.#nextPartition };
  }

  #node(key: unknown): LabNode {
    const node = typeof key === 'string' ? this.#nodes.get(key) : undefined;
    if (!node) throw invalid(`lab has no node ${shownValue(key, String)} (nodes: ${[...this.#nodes.keys()].join(', ')})`);
    return node;
  }

  /** The link between two nodes and which end is `from`'s. */
  #link(from: unknown, to: unknown): { link: PlannedLink; near: PlannedEnd; far: PlannedEnd } {
    this.#node(from);
    this.#node(to);
    for (const link of this.plan.links) {
      if (link.a.node === from && link.b.node === to) return { link, near: link.a, far: link.b };
      if (link.b.node === from && link.a.node === to) return { link, near: link.b, far: link.a };
    }
    throw invalid(`lab has no link between ${String(from)} and ${String(to)}`);
  }

  /**
   * Starts a command in a node as `ip netns exec` does, returned at once: in a
   * mount namespace of its own where /sys shows the node's interfaces and each
   * entry of /etc/netns/<its namespace name> is bound over /etc (the lab's
   * hosts file among them), with the node's key as its hostname unless
   * `hostname` says otherwise. `{ etc: false }` starts it in the network
   * namespace only, as `nodes[node].spawn` does.
   */
  spawn(node: string, command: string, args?: string[], options?: NetnsSpawnOptions): ChildProcess {
    return this.#node(node).ns!.spawn(command, args, asMachine(options, node, this.#dirsToLay(node)));
  }

  /** As spawn, collecting the output as NetNS.execFile does. Async; an unknown node rejects with ERR_NETNS_INVALID_ARG. */
  async execFile(node: string, command: string, args?: string[], options?: ExecFileOptions): Promise<ExecFileResult> {
    return this.#node(node).ns!.execFile(command, args, asMachine(options, node, this.#dirsToLay(node)));
  }

  /**
   * Where a node's directories of its own (its spec's `dirs`) are on this
   * machine, by path in the node: the lab's folder, an overlay's folder of
   * changes, or the test's folder. Read them before delete(), which removes the lab's.
   */
  dirs(node: string): Record<string, string> {
    const { dirs } = this.#planned(node);
    return dirs ? dirsOnMachine(this.names[node]!, dirs) : {};
  }

  #dirsToLay(node: string): PrivateDir[] {
    const { dirs } = this.#planned(node);
    return dirs ? dirsToLay(this.names[node]!, dirs) : [];
  }

  #planned(node: string): LabPlan['nodes'][number] {
    this.#node(node);
    return this.plan.nodes.find(({ key }) => key === node)!;
  }

  /** A node's address (without prefix length): the first one of the family (default 4) on its first link. */
  address(node: string, family: 4 | 6 = 4): string {
    this.#node(node);
    for (const link of this.plan.links) {
      for (const end of [link.a, link.b]) {
        const found = end.node === node ? end.addresses.find((cidr) => cidr.includes(':') === (family === 6)) : undefined;
        if (found) return found.split('/')[0]!;
      }
    }
    throw invalid(`node ${node} has no IPv${family} address`);
  }

  /** The interface of `node` on its link to `peer` ("eth1"). */
  interfaceTo(node: string, peer: string): string {
    return this.#link(node, peer).near.iface;
  }

  /**
   * Impairs what `from` sends to `to` over their link (replacing what was set
   * that way): `{ rate: '10mbit', delay: '20ms', jitter: '5ms', loss: 1, duplicate: 1 }`.
   * delay, jitter and duplicate need sch_netem (ERR_NETNS_UNSUPPORTED names it
   * where the kernel lacks it, and the link is left unimpaired); rate and
   * loss work without it. Loss is lost on the wire: dropped as `to` receives
   * it, so `from` is never told. An empty impairment clears.
   */
  async impair(from: string, to: string, impairment: Impairment): Promise<void> {
    const ends = this.#ends(from, to);
    const checked = checkImpairment(impairment, `${from}→${to}`);
    await this.#serial(pair(from, to), async () => {
      this.#impairments.delete(pair(from, to));
      await applyImpairment(...ends, checked, `${from}→${to}`);
      if (Object.keys(checked).length > 0) this.#impairments.set(pair(from, to), checked);
    });
  }

  /** The sending and the receiving end of what `from` sends to `to`. */
  #ends(from: string, to: string): [LinkEnd, LinkEnd] {
    const { near, far } = this.#link(from, to);
    return [
      { node: this.#node(from), iface: near.iface },
      { node: this.#node(to), iface: far.iface },
    ];
  }

  /** Runs `change` after every change queued under `key` has settled. */
  #serial<T>(key: string, change: () => Promise<T>): Promise<T> {
    const next = (this.#queues.get(key) ?? Promise.resolve()).catch(() => {}).then(change);
    this.#queues.set(key, next);
    return next;
  }

  /** Takes the impairment off what `from` sends to `to`. */
  async clearImpairment(from: string, to: string): Promise<void> {
    const ends = this.#ends(from, to);
    await this.#serial(pair(from, to), async () => {
      await clearImpairment(...ends);
      this.#impairments.delete(pair(from, to));
    });
  }

  /** The impairments in force, one per impaired direction. */
  impairments(): LabImpairment[] {
    return [...this.#impairments].map(([key, impairment]) => {
      const [from, to] = key.split('>') as [string, string];
      return { from, to, interface: this.interfaceTo(from, to), impairment, text: describeImpairment(impairment) };
    });
  }

  /** Sets both ends of the link administratively down, as pulling the cable (`ip link set … down` on each). */
  async linkDown(a: string, b: string): Promise<void> {
    const { link } = this.#link(a, b);
    await this.#serial(`link ${pair(link.a.node, link.b.node)}`, async () => {
      for (const end of [link.a, link.b]) await inNode(this.#node(end.node), (nl) => nl.links.down(end.iface));
      this.#down.add(pair(link.a.node, link.b.node));
    });
  }

  /**
   * Sets both ends up again and puts back what the kernel flushed when they
   * went down: the ends' addresses (IPv6 ones go with the link) and the
   * routes through them.
   */
  async linkUp(a: string, b: string): Promise<void> {
    const { link } = this.#link(a, b);
    await this.#serial(`link ${pair(link.a.node, link.b.node)}`, () => this.#bringUp(link));
  }

  async #bringUp(link: PlannedLink): Promise<void> {
    for (const end of [link.a, link.b]) {
      const node = this.#node(end.node);
      await inNode(node, (nl) => nl.links.up(end.iface));
      for (const cidr of end.addresses) {
        const flags = cidr.includes(':') ? (['nodad'] as const) : [];
        await ignoreExisting(inNode(node, (nl) => nl.addresses.add({ link: end.iface, address: cidr, flags: [...flags] })));
      }
      for (const route of Object.hasOwn(this.plan.routes, end.node) ? this.plan.routes[end.node]! : []) {
        if (route.device === end.iface) await ignoreExisting(inNode(node, (nl) => nl.routes.add(route)));
      }
    }
    this.#down.delete(pair(link.a.node, link.b.node));
  }

  /** The links that are down, as [a, b] pairs. */
  linksDown(): [string, string][] {
    return [...this.#down].map((key) => key.split('>') as [string, string]);
  }

  /**
   * Cuts every node of `sideA` off from every node of `sideB` (hosts and
   * routers: a switch carries no address), both ways, until heal(). Async;
   * returns the partition (its id for heal). A node on both sides is refused.
   */
  async partition(sideA: string[], sideB: string[]): Promise<LabPartition> {
    const sides = [this.#side(sideA, 'sideA'), this.#side(sideB, 'sideB')] as const;
    const both = sides[0].filter((key) => sides[1].includes(key));
    if (both.length > 0) throw invalid(`partition: ${both.join(', ')} on both sides`);
    const partition: LabPartition = { id: this.#nextPartition++, sides };
    this.#partitions.set(partition.id, partition);
    return this.#serial('partitions', async () => {
      try {
        for (const [mine, theirs] of [[sides[0], sides[1]], [sides[1], sides[0]]] as const) {
          const addresses = (await Promise.all(theirs.map((key) => this.#liveAddressesOf(key)))).flat();
          for (const key of mine) await cutOff(this.#node(key), partition.id, addresses);
        }
      } catch (error) {
        await this.#heal([partition.id]).catch(() => {});
        throw error;
      }
      return partition;
    });
  }

  /** The node's planned addresses and the IPv6 link-local ones the kernel gave its interfaces (a partition must cut those too). */
  async #liveAddressesOf(key: string): Promise<string[]> {
    const linkLocal = this.plan.ipv6 ? await inNode(this.#node(key), (nl) => nl.addresses.list({ family: 6 })) : [];
    return [...this.#addressesOf(key), ...linkLocal.filter((a) => a.scope === 'link').map((a) => a.address)];
  }

  #side(side: unknown, what: string): string[] {
    if (!Array.isArray(side) || side.length === 0) throw invalid(`partition: ${what} must be a non-empty array of node keys`);
    for (const key of side) {
      if (this.#node(key).kind === 'switch') throw invalid(`partition: ${String(key)} is a switch, which has no address to cut off: take its links down instead`);
    }
    return [...new Set(side as string[])];
  }

  #addressesOf(key: string): string[] {
    return this.plan.links.flatMap((link) => [link.a, link.b]).filter((end) => end.node === key).flatMap((end) => end.addresses.map((cidr) => cidr.split('/')[0]!));
  }

  /** Heals one partition (by itself or its id), or every partition when none is given. */
  async heal(partition?: LabPartition | number): Promise<void> {
    // The ids are taken when the heal runs, not when it is called: a heal of one queued before a heal of all must not
    // make the second fail on the id the first removed (and leave the rest in force).
    const id = typeof partition === 'number' ? partition : partition?.id;
    await this.#serial('partitions', () => this.#heal(partition === undefined ? [...this.#partitions.keys()] : [id]));
  }

  async #heal(ids: unknown[]): Promise<void> {
    for (const id of ids) {
      const found = typeof id === 'number' ? this.#partitions.get(id) : undefined;
      if (!found) throw invalid(`heal: no partition ${String(id)} (in force: ${[...this.#partitions.keys()].join(', ') || 'none'})`);
      for (const key of found.sides.flat()) await reconnect(this.#node(key), found.id);
      this.#partitions.delete(found.id);
    }
  }

  /** The partitions in force. */
  partitions(): LabPartition[] {
    return [...this.#partitions.values()];
  }

  /** Captures what `node` sends and receives on its link to `peer` into a pcap file (see capturePackets). */
  async capture(node: string, peer: string, options: { file: string; snaplen?: number }): Promise<PacketCapture> {
    const { near } = this.#link(node, peer);
    const capture = await capturePackets(this.#node(node).ns!, near.iface, options);
    this.#captures.add(capture);
    return capture;
  }

  /**
   * Tries every ordered pair of hosts and routers (or `nodes`), as pingAll:
   * returns who reached whom, with a printable table.
   */
  async connectivity(options?: ConnectivityOptions): Promise<ConnectivityMatrix> {
    const { family = 4, timeout = 1000, nodes } = ownOptions(options);
    refuseUnknownKeys(options, ['family', 'timeout', 'nodes'], 'connectivity options', invalid);
    if (family !== 4 && family !== 6) throw invalid(`connectivity: family must be 4 or 6, got ${String(family)}`);
    if (family === 6 && !this.plan.ipv6) throw invalid('connectivity: family 6 in a lab made with ipv6: false');
    if (!Number.isSafeInteger(timeout) || timeout < 1 || timeout > MAX_TIMER_MS) throw invalid(`connectivity: timeout must be an integer from 1 to ${MAX_TIMER_MS} ms, got ${String(timeout)}`);
    if (nodes !== undefined && (!Array.isArray(nodes) || nodes.some((key) => this.#node(key).kind === 'switch'))) throw invalid('connectivity: nodes must be an array of hosts and routers');
    const keys = nodes ?? this.plan.nodes.filter((n) => n.kind !== 'switch').map((n) => n.key);
    const probes = keys.map((key) => {
      const node = this.#node(key);
      return { key, ns: node.ns!, address: this.#addressesOf(key).find((a) => a.includes(':') === (family === 6)) };
    });
    return connectivity(probes, timeout);
  }

  /** The lab as a picture: Mermaid (default) or Graphviz DOT, with impairments and links down marked. */
  picture(format: 'mermaid' | 'dot' = 'mermaid'): string {
    if (format !== 'mermaid' && format !== 'dot') throw invalid(`picture format must be 'mermaid' or 'dot', got ${JSON.stringify(format)}`);
    return (format === 'dot' ? dot : mermaid)(this.plan, { impairments: this.#impairments, down: this.#down });
  }

  /**
   * Lets go of the lab's handles and sockets and leaves it running (another
   * process may attach to it, or `netns lab down` delete it). Synchronous,
   * idempotent; the lab's methods no longer work afterwards.
   */
  close(): void {
    for (const node of this.#nodes.values()) {
      node.nl?.close();
      node.nft?.then((nft) => nft.close(), () => {});
      node.ns?.close();
    }
    this.#unhook();
  }

  /** The namespaces this lab made (or attached to). */
  #made(): NetNS[] {
    return [...this.#nodes.values()].flatMap((node) => (node.ns ? [node.ns] : []));
  }

  /**
   * The hosts folders of the namespaces this lab made or attached to, and
   * any it made itself (a name it found taken may have one: see HostsFiles).
   * A folder that is not the lab's is never removed (removeHostsFolder).
   */
  #removeHostsFolders(): void {
    const names = new Set([...this.#made().map((ns) => ns.name!), ...(this.#hostsFiles?.made ?? [])]);
    for (const name of names) removeHostsFolder(name);
  }

  /** The lab's folders of its nodes' directories (a test's own folders are never touched). */
  #removeNodeDirs(): void {
    for (const { key, dirs } of this.plan.nodes) if (dirs && this.#nodes.get(key)!.ns) removeNodeDirs(this.names[key]!);
  }

  /** What the exit hook may delete: each name made, with the namespace it must still hold. */
  #identities(): { name: string; dev: number; inode: number }[] {
    return this.#made().map((ns) => ({ name: ns.name!, dev: ns.dev, inode: ns.inode }));
  }

  /**
   * Deletes every namespace of the lab (and with them its links, tables and
   * qdiscs); idempotent, never rejects: a namespace that cannot be deleted is
   * left for sweep(prefix).
   */
  async delete(): Promise<void> {
    if (this.#deleted) return;
    this.#deleted = true;
    await Promise.all([...this.#captures].map((capture) => capture.stop().catch(() => {})));
    await this.#stopFrr();
    if (this.#uplink) await removeUplink(this.#uplink);
    // ns.delete(), not the name's: a name that now holds another namespace (deleted and made again by someone else) is left alone.
    const unmounting = Promise.all(this.#made().map((ns) => ns.delete().catch(() => {})));
    // Meanwhile, on this thread, the files: the addon's threads unmount.
    this.#removeHostsFolders();
    this.#removeNodeDirs();
    await unmounting;
    this.close();
  }

  /** Stops every FRR daemon (awaited), keeps their logs and removes their directory. */
  async #stopFrr(): Promise<void> {
    await Promise.all([...this.#frr.values()].map((router) => router.stop()));
    for (const [key, router] of this.#frr) this.#keptLogs.set(key, await router.logs());
    if (this.#frrDir) await rm(this.#frrDir, { recursive: true, force: true });
  }

  /** delete(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.delete();
  }
}

/**
 * The options with `etc: true`, the node's key as hostname unless they say
 * otherwise, and the node's own directories (`etc: false`: none of them);
 * anything but an object is left for spawn to refuse.
 */
function asMachine<T extends { etc?: boolean; hostname?: string; dirs?: PrivateDir[] }>(options: T | undefined, node: string, dirs: PrivateDir[]): T {
  if (options === undefined) return { etc: true, hostname: node, dirs } as T;
  if (typeof options !== 'object' || options === null || options.etc === false) return options;
  return { hostname: node, ...options, etc: true, dirs };
}

/** A write of /etc/netns the kernel refused for want of permission is no failure when names were only wanted if permitted. */
function refusedIfPermitted(error: NetnsError, hosts: true | 'if-permitted'): void {
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  if (hosts === true || (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS')) throw error;
}

/** Runs `hook` at process exit only; returns what takes it off. */
function exitOnly(hook: () => void): () => void {
  process.once('exit', hook);
  return () => process.off('exit', hook);
}

/** A route's next hops' addresses, of one or many. */
function gatewaysOf(route: Route): string[] {
  if (route.multipath) return route.multipath.flatMap((hop) => (hop.gateway ? [hop.gateway] : []));
  return route.gateway ? [route.gateway] : [];
}

async function ignoreExisting(done: Promise<unknown>): Promise<void> {
  try {
    await done;
  } catch (error) {
    if ((error as NetnsError).code !== 'EEXIST') throw error;
  }
}

/**
 * The namespace name of a named lab's node: `<prefix><lab>.<node>`. The dot
 * appears in neither a lab name nor a node key, so two labs of one prefix never
 * share a name (lab `x` with node `a-b`, lab `x-a` with node `b`), and sweep(), which
 * takes `<prefix><pid>-t<start>-p<pidns>-<hex>-` for a crashed process's, never takes a named lab (see ownerOf).
 */
export function namedLabNamespace(prefix: string, lab: string, node: string): string {
  return `${prefix}${lab}.${node}`;
}

function namesFor(plan: LabPlan, options: LabOptions): Record<string, string> {
  const stem = ownerStem();
  const names: Record<string, string> = {};
  for (const { key } of plan.nodes) {
    const name = options.name === undefined ? `${plan.prefix}${stem}-${key}` : namedLabNamespace(plan.prefix, options.name, key);
    assertValidName(name);
    names[key] = name;
  }
  return names;
}

/**
 * Builds a lab (see LabSpec): async; needs CAP_SYS_ADMIN and CAP_NET_ADMIN
 * (in the user namespace that owns the network and mount namespaces; with
 * `options.runDir` where /run/netns is not writable). First removes what
 * labs of the same prefix whose owner is gone left (sweep). A bad spec or option
 * rejects with ERR_NETNS_INVALID_ARG before anything is made, a lab past a
 * limit (a bridge's 1,023 ports, the open files) with ERR_NETNS_LAB_TOO_BIG; a
 * step the kernel refuses removes what was made and rejects with
 * ERR_NETNS_FIXTURE naming the namespace and the step in `ip` terms.
 */
export async function createLab(spec: LabSpec, given?: LabOptions): Promise<Lab> {
  const checked = checkLabSpec(spec);
  const plan = planLab(checked, checked.nat ? await machineSubnets() : []);
  const options = ownOptions(given);
  refuseUnknownKeys(options, ['name', 'keep', 'runDir', 'deleteOnSignal', 'hosts'], 'createLab options', invalid);
  const runDir = mountableRunDir(checkRunDir(options.runDir));
  for (const flag of ['keep', 'deleteOnSignal', 'hosts'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') throw invalid(`createLab: ${flag} must be a boolean, got ${typeof options[flag]}`);
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || !LAB_KEY.test(options.name))) {
    throw invalid(`createLab: name must match ${LAB_KEY}, got ${JSON.stringify(options.name)}`);
  }
  if (checked.frr.size > 0 && options.keep === true) throw invalid('createLab: FRR daemons are children of this process, so a lab with FRR routers cannot be kept');
  checkLabLimits(plan);
  const account = checked.frr.size > 0 ? frrAccount() : undefined;
  await sweep(plan.prefix, { runDir });
  const lab = new Lab(plan, namesFor(plan, options), options.keep === true, runDir, options.deleteOnSignal !== false);
  try {
    await lab.build(options.hosts ?? (runDir === NETNS_RUN_DIR ? 'if-permitted' : false), checked.frr, account);
  } catch (error) {
    await lab.delete();
    throw error;
  }
  return lab;
}

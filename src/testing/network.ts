// createTestNetwork: a few namespaces joined by veth pairs, for root-run
// integration tests. Everything it makes carries a prefix unique to this
// process and is removed by delete() (or dispose), on failure half-way, and at
// process exit.
// Links, addresses and lo are made over netlink (netns/netlink), one socket per
// host made inside its namespace: no `ip` process. Only `network.ip()` runs
// `ip`, because that is what it is for.
import { ErrorCodes, netnsError } from '../core/errors.js';
import { mountableRunDir, type RunDirOption } from '../core/names.js';
import { deleteNamespace } from '../lifecycle.js';
import { openNetlink, type Netlink } from '../netlink/index.js';
import { NetNS } from '../netns.js';
import { deleteNamespacesSync, runIpIn } from './run-ip.js';
import { checkedSpec } from './network-spec.js';
import { ownerStem } from './owner.js';
import { fixtureRunDir } from './run-dir.js';

/** One host of a TestNetworkSpec: a namespace of its own. */
export interface TestHostSpec {
  /** Address with prefix length (10.10.0.1/24), put on the host's first link. */
  addr?: string;
}

/** Two hosts to join; the optional third element gives per-host addresses for this link. */
export type TestLinkSpec<H extends string> = [H, H] | [H, H, Partial<Record<H, string>>];

/**
 * What createTestNetwork builds: hosts by key (letters, digits, _ and -, up to
 * 32) and the veth links joining them.
 */
export interface TestNetworkSpec<H extends string> {
  /** One namespace per key, with lo up. */
  hosts: Record<H, TestHostSpec>;
  /** Veth pairs, each joining two different hosts; a host's links are eth0, eth1, … in this order. */
  links?: TestLinkSpec<H>[];
  /** Name prefix (default 'nsfix-'); sweep(prefix) cleans up after crashed runs (sweep(prefix, { runDir }) for a network made with a runDir). */
  prefix?: string;
}

/**
 * The network createTestNetwork made. `await using` (or delete()) deletes its
 * namespaces; so does process exit, and sweep(prefix) after a crash.
 */
export interface TestNetwork<H extends string> extends AsyncDisposable {
  /** Each host's namespace, with the NetNS I/O methods. */
  readonly hosts: Record<H, NetNS>;
  /** Each host's namespace name in the run directory (`ip -n NAME` where that is /run/netns). */
  readonly names: Record<H, string>;
  /** The run directory its namespaces are named in: /run/netns unless createTestNetwork was given another. */
  readonly runDir: string;
  /** The address of a host without its prefix length. */
  address(host: H): string;
  /** Interfaces made for links, per host, in link order: eth0, eth1, … */
  interfaces(host: H): string[];
  /**
   * Runs `ip ...args` inside the host's namespace, as `ip -n NAME` does (but
   * entered by its handle, so it works in any run directory); resolves with
   * the output. ERR_NETNS_FIXTURE with ip's message when ip fails,
   * ERR_NETNS_IP_MISSING without ip. A `netns NAME` argument is looked up by
   * ip in /run/netns: with another runDir, give the path (hosts.b.path).
   */
  ip(host: H, ...args: string[]): Promise<string>;
  /**
   * Deletes the namespaces (and with them the links) and lets go of the
   * handles and netlink sockets; idempotent. Async. A namespace that cannot be
   * deleted is left for sweep(prefix); this never rejects.
   */
  delete(): Promise<void>;
  /** @deprecated use delete(): this removes the namespaces from the system, which close() never does elsewhere. */
  close(): Promise<void>;
}

/**
 * Makes namespaces joined by veth pairs, for a root-run integration test:
 * each host a namespace named `<prefix><pid>-t<start>-p<pidns>-<random>-<host>` with lo up,
 * each link a veth pair with its addresses, up, all over netlink (no `ip`
 * process). Async; needs CAP_SYS_ADMIN and CAP_NET_ADMIN (in the user
 * namespace that owns the network and mount namespaces: root of `unshare
 * -Urn --mount` will do). `options.runDir` names the namespaces in another
 * run directory than /run/netns (made, and made a shared mount, if need be):
 * what a user without write access to /run/netns passes. A bad spec or
 * option rejects with ERR_NETNS_INVALID_ARG before anything is made; a step
 * the kernel refuses removes what was made and rejects with ERR_NETNS_FIXTURE
 * naming the namespace and the step in `ip` terms (the netlink error as
 * `cause`).
 */
export async function createTestNetwork<H extends string>(given: TestNetworkSpec<H>, options?: RunDirOption): Promise<TestNetwork<H>> {
  const spec = checkedSpec(given) as Required<TestNetworkSpec<H>>;
  const runDir = mountableRunDir(fixtureRunDir(options, 'createTestNetwork options'));
  const runPrefix = `${spec.prefix}${ownerStem()}-`;
  const network = new Network<H>(runPrefix, runDir);
  try {
    await network.build(spec);
  } catch (error) {
    await network.delete();
    throw error;
  }
  return network;
}

class Network<H extends string> implements TestNetwork<H> {
  readonly hosts = {} as Record<H, NetNS>;
  readonly names = {} as Record<H, string>;
  readonly #addresses = new Map<H, string>();
  readonly #interfaces = new Map<H, string[]>();
  readonly #created: string[] = [];
  readonly #netlink = new Map<H, Netlink>();
  readonly #onExit = () =>
    deleteNamespacesSync(
      (Object.entries(this.hosts) as [H, NetNS][]).filter(([host]) => this.#created.includes(this.names[host])).map(([host, ns]) => ({ name: this.names[host], dev: ns.dev, inode: ns.inode })),
      this.runDir,
    );
  #deleted = false;

  constructor(
    private readonly runPrefix: string,
    readonly runDir: string,
  ) {
    process.once('exit', this.#onExit);
  }

  async build(spec: TestNetworkSpec<H>): Promise<void> {
    const hostKeys = Object.keys(spec.hosts) as H[];
    for (const host of hostKeys) {
      const name = `${this.runPrefix}${host}`;
      this.names[host] = name;
      this.#created.push(name);
      this.hosts[host] = await NetNS.create(name, { runDir: this.runDir });
      this.#interfaces.set(host, []);
      this.#netlink.set(host, await openNetlink(this.hosts[host]));
      await this.#configure(host, 'link set lo up', (nl) => nl.links.up('lo'));
    }
    for (const link of spec.links ?? []) await this.#link(link, spec.hosts);
  }

  async #link(link: TestLinkSpec<H>, hosts: Record<H, TestHostSpec>): Promise<void> {
    const [a, b] = link;
    const addresses: Partial<Record<H, string>> = link[2] ?? {};
    const ifA = this.#nextInterface(a);
    const ifB = this.#nextInterface(b);
    // One message: the peer is made directly inside b's namespace.
    await this.#configure(a, `link add ${ifA} type veth peer name ${ifB} netns ${this.names[b]}`, (nl) =>
      nl.links.add({ kind: 'veth', name: ifA, peer: { name: ifB, netns: this.hosts[b] } }),
    );
    for (const [host, iface] of [[a, ifA], [b, ifB]] as [H, string][]) {
      const cidr = addresses[host] ?? (iface === 'eth0' ? hosts[host].addr : undefined);
      if (cidr !== undefined) await this.#addAddress(host, iface, cidr);
      await this.#configure(host, `link set ${iface} up`, (nl) => nl.links.up(iface));
    }
  }

  /**
   * One netlink operation in a host's namespace. A refusal (the kernel's, or
   * bad input such as an invalid address) becomes ERR_NETNS_FIXTURE naming the
   * namespace and the operation in `ip` terms, with the netlink error as cause.
   */
  async #configure(host: H, what: string, run: (nl: Netlink) => Promise<unknown>): Promise<void> {
    try {
      await run(this.#netlink.get(host)!);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw netnsError(ErrorCodes.FIXTURE, `${what} in ${this.names[host]} failed: ${detail}`, { cause: error });
    }
  }

  #nextInterface(host: H): string {
    const list = this.#interfaces.get(host)!;
    const iface = `eth${list.length}`;
    list.push(iface);
    return iface;
  }

  async #addAddress(host: H, iface: string, cidr: string): Promise<void> {
    const flags = cidr.includes(':') ? (['nodad'] as const) : [];
    await this.#configure(host, `addr add ${cidr} dev ${iface}`, (nl) => nl.addresses.add({ link: iface, address: cidr, flags: [...flags] }));
    if (!this.#addresses.has(host)) this.#addresses.set(host, cidr.split('/')[0]!);
  }

  address(host: H): string {
    const address = this.#addresses.get(host);
    if (address === undefined) throw netnsError(ErrorCodes.INVALID_ARG, `host ${JSON.stringify(host)} has no address`);
    return address;
  }

  interfaces(host: H): string[] {
    return [...(this.#interfaces.get(host) ?? [])];
  }

  async ip(host: H, ...args: string[]): Promise<string> {
    const ns = Object.hasOwn(this.hosts, host) ? this.hosts[host] : undefined;
    if (ns === undefined) throw netnsError(ErrorCodes.INVALID_ARG, `network has no host ${JSON.stringify(host)}`);
    return runIpIn(ns, args);
  }

  async delete(): Promise<void> {
    if (this.#deleted) return;
    this.#deleted = true;
    for (const nl of this.#netlink.values()) nl.close();
    for (const ns of Object.values(this.hosts) as NetNS[]) ns.close();
    for (const name of this.#created) await deleteNamespace(name, { runDir: this.runDir }).catch(() => {});
    process.off('exit', this.#onExit);
  }

  /** @deprecated use delete(). */
  declare close: () => Promise<void>;

  [Symbol.asyncDispose](): Promise<void> {
    return this.delete();
  }
}

// The old name is the same function, not a wrapper: a test may compare them.
Network.prototype.close = Network.prototype.delete;

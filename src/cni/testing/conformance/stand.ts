// The runner's namespaces: one that stands for the host (the plugin runs
// there, so the machine's own network is never touched) and a container per
// attachment, all named under one prefix of this run and deleted at the end,
// whatever happened; at the process's exit too (a test runner's timeout, the
// CLI's ^C), as the test networks of netns/testing are.
import { randomBytes } from 'node:crypto';
import { NetNS } from '../../../netns.js';
import { openNetlink } from '../../../netlink/index.js';
import { deleteNamespacesSync, type MadeNamespace } from '../../../testing/run-ip.js';

export class Stand {
  readonly #made = new Map<string, NetNS>();
  readonly #onExit = () => deleteNamespacesSync([...this.#made.values()].map((ns): MadeNamespace => ({ name: ns.name!, dev: ns.dev, inode: ns.inode })));
  #count = 0;

  private constructor(
    readonly prefix: string,
    readonly host: NetNS,
  ) {}

  static async create(): Promise<Stand> {
    const prefix = `cnichk-${process.pid}-${randomBytes(2).toString('hex')}`;
    const stand = new Stand(prefix, await NetNS.create(`${prefix}-host`));
    stand.#remember(stand.host);
    process.once('exit', stand.#onExit);
    const nl = await openNetlink(stand.host);
    try {
      await nl.links.up('lo');
    } finally {
      nl.close();
    }
    return stand;
  }

  #remember(ns: NetNS): void {
    this.#made.set(ns.name!, ns);
  }

  /** A new, empty container namespace with a unique id for its attachment. */
  async container(): Promise<{ ns: NetNS; id: string }> {
    const id = `${this.prefix}-${++this.#count}`;
    const ns = await NetNS.create(id);
    this.#remember(ns);
    return { ns, id };
  }

  /** Deletes a container's namespace (DEL after the namespace is gone). */
  async remove(ns: NetNS): Promise<void> {
    ns.close();
    await NetNS.delete(ns.name!);
    this.#made.delete(ns.name!);
  }

  /** Deletes every namespace it made, the host's last. */
  async close(): Promise<void> {
    for (const [name, ns] of [...this.#made].reverse()) {
      ns.close();
      await NetNS.delete(name).catch(() => {});
    }
    this.#made.clear();
    process.off('exit', this.#onExit);
  }
}

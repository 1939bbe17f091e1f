// The cni-ptp example plugin and Debian's Go plugins, run as a runtime runs
// them: CNI_* variables, the configuration on stdin, in the namespace that
// stands for the host, stdout and the exit code read back.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NetNS } from '../../dist/index.js';
import { openNetlink } from '../../dist/netlink/index.js';
import { execOutcome, type ExecOutcome } from './exec-outcome.js';

/** The example as it ships: one bundled file. */
export const OURS = fileURLToPath(new URL('../../examples/cni-ptp/dist/cni-ptp.cjs', import.meta.url));
/** Debian's containernetworking-plugins (1.1.1): host-local for IPAM, ptp and loopback to compare with. */
export const GO_PLUGINS = '/usr/lib/cni';
export const haveGoPlugins = existsSync(`${GO_PLUGINS}/ptp`) && existsSync(`${GO_PLUGINS}/host-local`);
if (!haveGoPlugins && process.env.CI) throw new Error('CI must install containernetworking-plugins (ptp, host-local, loopback in /usr/lib/cni)');

export type Plugin = 'ours' | 'go';

export interface PluginRun extends ExecOutcome {
  json: Record<string, unknown> | undefined;
}

const parse = (text: string): Record<string, unknown> | undefined => (text.trim() ? (JSON.parse(text) as Record<string, unknown>) : undefined);

/** Runs a plugin in `host` (the namespace that stands for the node) exactly as a runtime does. */
export async function run(host: NetNS, plugin: Plugin, env: Record<string, string>, config: object | string, path = process.env.PATH ?? ''): Promise<PluginRun> {
  const [command, args] = plugin === 'go' ? [`${GO_PLUGINS}/ptp`, []] : [process.execPath, [OURS]];
  const input = typeof config === 'string' ? config : JSON.stringify(config);
  const outcome = await execOutcome(host, command, args, { env: { PATH: path, CNI_PATH: GO_PLUGINS, ...env }, input });
  return { ...outcome, json: parse(outcome.stdout) };
}

/** The CNI_* variables of one attachment's command. */
export const attach = (command: string, container: NetNS, containerId: string, ifname = 'eth0') => ({
  CNI_COMMAND: command,
  CNI_CONTAINERID: containerId,
  CNI_NETNS: container.path,
  CNI_IFNAME: ifname,
});

/** `ip -j ...` in a namespace, parsed. */
export async function ipJson(ns: NetNS, ...args: string[]): Promise<Record<string, unknown>[]> {
  const { stdout } = await ns.execFile('ip', ['-j', ...args]);
  return stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>[]) : [];
}

/**
 * Resolves once no address in `ns` is tentative: IPv6 duplicate address detection is over, and
 * with it the kernel has added each address's local route (it holds that route back until then).
 * Waits on rtnetlink's address events, not on a clock.
 */
export async function untilDadDone(ns: NetNS): Promise<void> {
  const nl = await openNetlink(ns);
  try {
    const tentative = new Set<string>();
    let synced = false;
    for await (const event of await nl.watch({ addresses: true, existing: true })) {
      if (event.type === 'synced') synced = true;
      if (event.type === 'address') {
        const key = `${event.address.index} ${event.address.address}`;
        if (event.action !== 'delete' && event.address.flags.includes('tentative')) tentative.add(key);
        else tentative.delete(key);
      }
      if (synced && tentative.size === 0) return;
    }
  } finally {
    nl.close();
  }
}

// The plumbing: a veth pair between the host namespace and the container's,
// the container's address and default route, the host route back, and one
// address set per attachment so that host-side policy can refer to the
// container's address. Links, addresses and routes go over netlink
// (netns/netlink), through a socket made inside each namespace: no `ip`
// process, and no thread switching namespace. Only the address sets run `nft`.
import { createHash } from 'node:crypto';
import { NetNS, type NetnsError } from 'netns';
import { AddressSets } from 'netns/addrset';
import { openNetlink, type Netlink } from 'netns/netlink';
import type { PtpConfig, PtpResult } from './config.js';
import { CniCodes, CniError, type Invocation } from './protocol.js';

const HOST_IF_PREFIX = 'cnip';

/** The host end's name: derived from the attachment, so DEL and GC find it again. */
export function hostIfname(containerId: string, ifname: string): string {
  return HOST_IF_PREFIX + createHash('sha256').update(`${containerId}/${ifname}`).digest('hex').slice(0, 11);
}

/** The address-set owner of one attachment. */
export function attachmentOwner(containerId: string, ifname: string): string {
  return `${containerId}/${ifname}`;
}

function ioFailure(what: string, error: unknown): CniError {
  return new CniError(CniCodes.IO_FAILURE, `${what}: ${(error as Error).message.trim()}`);
}

/** A netlink handle inside `ns`, closed after `use`. */
async function withNetlink<T>(ns: NetNS, use: (nl: Netlink) => Promise<T>): Promise<T> {
  const nl = await openNetlink(ns);
  try {
    return await use(nl);
  } finally {
    nl.close();
  }
}

/** Runs one step; a failure becomes a CNI I/O failure naming it. */
async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw ioFailure(what, error);
  }
}

export function openContainer(path: string): NetNS {
  try {
    return NetNS.open(path);
  } catch (error) {
    const code = (error as NetnsError).code;
    if (code === 'ENOENT') throw new CniError(CniCodes.CONTAINER_UNKNOWN, `container namespace ${path} does not exist`);
    throw new CniError(CniCodes.INVALID_ENVIRONMENT, `CNI_NETNS: ${(error as Error).message}`);
  }
}

export function openHost(config: PtpConfig): NetNS {
  try {
    return config.hostNetns ? NetNS.open(config.hostNetns) : NetNS.current();
  } catch (error) {
    throw new CniError(CniCodes.INVALID_CONFIG, `hostNetns: ${(error as Error).message}`);
  }
}

export async function withAddressSets<T>(host: NetNS, config: PtpConfig, use: (sets: AddressSets) => Promise<T>): Promise<T> {
  const sets = await AddressSets.open({ netns: host, table: config.addressSets.table, deleteDelayMs: config.addressSets.deleteDelayMs ?? 20_000 });
  try {
    return await use(sets);
  } finally {
    await sets.close();
  }
}

export async function addAttachment(invocation: Invocation, config: PtpConfig): Promise<PtpResult> {
  const container = openContainer(invocation.netns);
  const host = openHost(config);
  const hostIf = hostIfname(invocation.containerId, invocation.ifname);
  const ifname = invocation.ifname;
  const containerIp = config.address.split('/')[0]!;
  let hostNl: Netlink | undefined;
  let containerNl: Netlink | undefined;
  try {
    hostNl = await step('opening netlink in the host namespace', () => openNetlink(host));
    containerNl = await step('opening netlink in the container namespace', () => openNetlink(container));
    const [hostSide, inside] = [hostNl, containerNl]; // narrowed for the closures below
    // One message: the container end is made directly inside the container.
    const hostLink = await step(`creating veth ${hostIf}`, () => hostSide.links.add({ kind: 'veth', name: hostIf, peer: { name: ifname, netns: container } }));
    try {
      // Inside the container, through the socket made there.
      const mac = await step('configuring the container side', async () => {
        await inside.links.up('lo');
        await inside.addresses.add({ link: ifname, address: config.address });
        await inside.links.up(ifname);
        await inside.routes.add({ destination: 'default', gateway: config.gateway, device: ifname, onlink: true });
        return (await inside.links.get(ifname)).mac!;
      });
      await step(`addr add ${config.gateway}/32 dev ${hostIf}`, () => hostSide.addresses.add({ link: hostLink.index, address: `${config.gateway}/32` }));
      await step(`link set ${hostIf} up`, () => hostSide.links.up(hostLink.index));
      await step(`route add ${containerIp}/32 dev ${hostIf}`, () => hostSide.routes.add({ destination: `${containerIp}/32`, device: hostLink.index }));
      await withAddressSets(host, config, (sets) => sets.ensure(attachmentOwner(invocation.containerId, ifname), [containerIp]));
      return {
        cniVersion: config.cniVersion,
        interfaces: [
          { name: hostIf, mac: hostLink.mac! },
          { name: ifname, mac, sandbox: invocation.netns },
        ],
        ips: [{ address: config.address, gateway: config.gateway, interface: 1 }],
        routes: [{ dst: '0.0.0.0/0', gw: config.gateway }],
        dns: {},
      };
    } catch (error) {
      await hostSide.links.delete(hostLink.index).catch(() => {}); // takes the container end with it
      throw error;
    }
  } finally {
    hostNl?.close();
    containerNl?.close();
    container.close();
    host.close();
  }
}

/** Idempotent: whatever is already gone is fine. */
export async function deleteAttachment(invocation: Invocation, config: PtpConfig): Promise<void> {
  const host = openHost(config);
  try {
    const hostIf = hostIfname(invocation.containerId, invocation.ifname);
    await withNetlink(host, (nl) => nl.links.delete(hostIf)).catch((error: NetnsError) => {
      if (error.code !== 'ENODEV') throw ioFailure(`deleting ${hostIf}`, error);
    });
    await withAddressSets(host, config, (sets) => sets.delete(attachmentOwner(invocation.containerId, invocation.ifname)));
  } finally {
    host.close();
  }
}

export async function checkAttachment(invocation: Invocation, config: PtpConfig): Promise<void> {
  const expected = config.prevResult;
  if (!expected) throw new CniError(CniCodes.INVALID_CONFIG, 'CHECK needs prevResult');
  const container = openContainer(invocation.netns);
  const host = openHost(config);
  const mismatch = (what: string) => new CniError(CniCodes.CHECK_FAILED, `attachment differs from prevResult: ${what}`);
  try {
    const state = await withNetlink(container, async (nl) => {
      const link = await nl.links.get(invocation.ifname);
      const addresses = await nl.addresses.list({ link: link.index, family: 4 });
      const routes = await nl.routes.list({ family: 4 });
      return {
        addresses: addresses.map((a) => `${a.address}/${a.prefixLength}`),
        defaultVia: routes.find((route) => route.destination === '0.0.0.0/0' && route.device === link.index)?.gateway,
      };
    }).catch((error) => {
      throw mismatch(`interface ${invocation.ifname} is missing (${(error as Error).message.split('\n')[0]})`);
    });
    for (const ip of expected.ips) {
      if (!state.addresses.includes(ip.address)) throw mismatch(`address ${ip.address} is not on ${invocation.ifname}`);
      if (state.defaultVia !== ip.gateway) throw mismatch(`no default route via ${ip.gateway}`);
    }
    await withNetlink(host, (nl) => nl.links.get(hostIfname(invocation.containerId, invocation.ifname))).catch(() => {
      throw mismatch('the host end of the veth pair is missing');
    });
    const details = await withAddressSets(host, config, (sets) => sets.inspect(attachmentOwner(invocation.containerId, invocation.ifname)));
    const wanted = expected.ips.map((ip) => ip.address.split('/')[0]!);
    if (details.state !== 'live' && details.state !== 'orphan') throw mismatch(`address set is ${details.state}`);
    if (wanted.some((ip) => !details.v4.elements.includes(ip))) throw mismatch('address set does not hold the container address');
  } finally {
    container.close();
    host.close();
  }
}

/** Keeps only the attachments the runtime lists as valid: their address sets and host interfaces. */
export async function collectGarbage(config: PtpConfig): Promise<void> {
  const valid = config['cni.dev/valid-attachments'] ?? [];
  const host = openHost(config);
  try {
    await withAddressSets(host, config, (sets) => sets.gc({ live: valid.map((a) => attachmentOwner(a.containerID, a.ifname)) }));
    const keep = new Set(valid.map((a) => hostIfname(a.containerID, a.ifname)));
    await withNetlink(host, async (nl) => {
      for (const { name, kind, index } of await nl.links.list()) {
        if (kind === 'veth' && name.startsWith(HOST_IF_PREFIX) && name.length === 15 && !keep.has(name)) {
          await nl.links.delete(index).catch(() => {});
        }
      }
    });
  } finally {
    host.close();
  }
}

/** Whether the plugin can work: the host namespace opens, netlink opens in it, and nft runs there. */
export async function status(config: PtpConfig): Promise<void> {
  const host = openHost(config);
  try {
    await withNetlink(host, (nl) => nl.links.get('lo'));
    await host.execFile('nft', ['--version']);
  } catch (error) {
    throw new CniError(CniCodes.PLUGIN_NOT_AVAILABLE, `plugin not available: ${(error as Error).message}`);
  } finally {
    host.close();
  }
}

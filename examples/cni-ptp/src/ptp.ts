// The plumbing: a veth pair between the host namespace and the container's,
// the container's address and default route (configured from inside the
// container with withNetNS), the host route back, and one address set per
// attachment so that host-side policy can refer to the container's address.
import { createHash } from 'node:crypto';
import { withNetNS, NetNS, type NetnsError } from 'netns';
import { AddressSets } from 'netns/addrset';
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
  const failed = error as Error & { stderr?: string };
  return new CniError(CniCodes.IO_FAILURE, `${what}: ${(failed.stderr || failed.message).trim()}`);
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

async function linkMac(ns: NetNS, ifname: string): Promise<string> {
  const { stdout } = await ns.execFile('ip', ['-j', 'link', 'show', 'dev', ifname]);
  return (JSON.parse(stdout) as { address: string }[])[0]!.address;
}

export async function addAttachment(invocation: Invocation, config: PtpConfig): Promise<PtpResult> {
  const container = openContainer(invocation.netns);
  const host = openHost(config);
  const hostIf = hostIfname(invocation.containerId, invocation.ifname);
  const containerIp = config.address.split('/')[0]!;
  try {
    await host.execFile('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', invocation.ifname, 'netns', container.path]).catch((error) => {
      throw ioFailure(`creating veth ${hostIf}`, error);
    });
    try {
      // Inside the container: plain child_process, because fn runs there.
      const mac = await withNetNS(
        container,
        (ifname: string, address: string, gateway: string) => {
          const ip = (...args: string[]) => require('node:child_process').execFileSync('ip', args, { encoding: 'utf8' }) as string;
          ip('link', 'set', 'lo', 'up');
          ip('addr', 'add', address, 'dev', ifname);
          ip('link', 'set', ifname, 'up');
          ip('route', 'add', 'default', 'via', gateway, 'dev', ifname, 'onlink');
          return (JSON.parse(ip('-j', 'link', 'show', 'dev', ifname)) as { address: string }[])[0]!.address;
        },
        invocation.ifname,
        config.address,
        config.gateway,
      ).catch((error) => {
        throw ioFailure('configuring the container side', error);
      });
      for (const args of [
        ['addr', 'add', `${config.gateway}/32`, 'dev', hostIf],
        ['link', 'set', hostIf, 'up'],
        ['route', 'add', `${containerIp}/32`, 'dev', hostIf],
      ]) {
        await host.execFile('ip', args).catch((error) => {
          throw ioFailure(`ip ${args.join(' ')}`, error);
        });
      }
      await withAddressSets(host, config, (sets) => sets.ensure(attachmentOwner(invocation.containerId, invocation.ifname), [containerIp]));
      return {
        cniVersion: config.cniVersion,
        interfaces: [
          { name: hostIf, mac: await linkMac(host, hostIf) },
          { name: invocation.ifname, mac, sandbox: invocation.netns },
        ],
        ips: [{ address: config.address, gateway: config.gateway, interface: 1 }],
        routes: [{ dst: '0.0.0.0/0', gw: config.gateway }],
        dns: {},
      };
    } catch (error) {
      await host.execFile('ip', ['link', 'del', hostIf]).catch(() => {}); // takes the container end with it
      throw error;
    }
  } finally {
    container.close();
    host.close();
  }
}

/** Idempotent: whatever is already gone is fine. */
export async function deleteAttachment(invocation: Invocation, config: PtpConfig): Promise<void> {
  const host = openHost(config);
  try {
    const hostIf = hostIfname(invocation.containerId, invocation.ifname);
    await host.execFile('ip', ['link', 'del', hostIf]).catch((error: { stderr?: string }) => {
      if (!/Cannot find device/.test(error.stderr ?? '')) throw ioFailure(`deleting ${hostIf}`, error);
    });
    await withAddressSets(host, config, (sets) => sets.delete(attachmentOwner(invocation.containerId, invocation.ifname)));
  } finally {
    host.close();
  }
}

interface ContainerState {
  addresses: string[];
  defaultVia: string | undefined;
}

export async function checkAttachment(invocation: Invocation, config: PtpConfig): Promise<void> {
  const expected = config.prevResult;
  if (!expected) throw new CniError(CniCodes.INVALID_CONFIG, 'CHECK needs prevResult');
  const container = openContainer(invocation.netns);
  const host = openHost(config);
  const mismatch = (what: string) => new CniError(CniCodes.CHECK_FAILED, `attachment differs from prevResult: ${what}`);
  try {
    const state = await withNetNS(
      container,
      (ifname: string): ContainerState => {
        const run = (...args: string[]) => JSON.parse(require('node:child_process').execFileSync('ip', ['-j', ...args], { encoding: 'utf8' }) || '[]');
        const info = run('addr', 'show', 'dev', ifname) as { addr_info: { family: string; local: string; prefixlen: number }[] }[];
        const routes = run('route', 'show', 'default') as { gateway?: string; dev: string }[];
        return {
          addresses: (info[0]?.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`),
          defaultVia: routes.find((route) => route.dev === ifname)?.gateway,
        };
      },
      invocation.ifname,
    ).catch((error) => {
      throw mismatch(`interface ${invocation.ifname} is missing (${(error as Error).message.split('\n')[0]})`);
    });
    for (const ip of expected.ips) {
      if (!state.addresses.includes(ip.address)) throw mismatch(`address ${ip.address} is not on ${invocation.ifname}`);
      if (state.defaultVia !== ip.gateway) throw mismatch(`no default route via ${ip.gateway}`);
    }
    await host.execFile('ip', ['link', 'show', 'dev', hostIfname(invocation.containerId, invocation.ifname)]).catch(() => {
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
    const { stdout } = await host.execFile('ip', ['-j', 'link', 'show', 'type', 'veth']);
    for (const { ifname } of JSON.parse(stdout || '[]') as { ifname: string }[]) {
      if (ifname.startsWith(HOST_IF_PREFIX) && ifname.length === 15 && !keep.has(ifname)) {
        await host.execFile('ip', ['link', 'del', ifname]).catch(() => {});
      }
    }
  } finally {
    host.close();
  }
}

/** Whether the plugin can work: the host namespace opens and ip and nft run in it. */
export async function status(config: PtpConfig): Promise<void> {
  const host = openHost(config);
  try {
    await host.execFile('ip', ['-V']);
    await host.execFile('nft', ['--version']);
  } catch (error) {
    throw new CniError(CniCodes.PLUGIN_NOT_AVAILABLE, `plugin not available: ${(error as Error).message}`);
  } finally {
    host.close();
  }
}

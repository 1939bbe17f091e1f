// What the configured IPAM plugin speaks: GC and STATUS are forwarded only to
// one that has them (Debian's host-local 1.1.1 answers both with "unknown
// CNI_COMMAND"), and a DEL a GC sends is written in a version it reads.
import { delegateVersions, ipamType, versionAtLeast, type CmdArgs, type IpamInput } from 'netns/cni';

/** Asked with the call's environment (its CNI_PATH): in resident mode process.env is the daemon's. */
export function ipamVersions({ config, env }: Pick<CmdArgs, 'config' | 'env'>): Promise<string[]> {
  return delegateVersions(ipamType(config), env);
}

export const speaks = (versions: readonly string[], version: string): boolean => versions.some((v) => versionAtLeast(v, version));

export async function ipamSpeaks(args: Pick<CmdArgs, 'config' | 'env'>, version: string): Promise<boolean> {
  return speaks(await ipamVersions(args), version);
}

/**
 * The GC's args for an IPAM DEL: the configuration as it came, or in the
 * newest version the plugin speaks when it does not speak the GC's own
 * (1.1.0, which Debian's host-local 1.1.1 refuses, where DEL means the same).
 */
export function forIpamDel(args: CmdArgs, versions: readonly string[]): IpamInput {
  if (versions.length === 0 || versions.includes(args.config.cniVersion)) return args;
  const newest = versions.reduce((a, b) => (versionAtLeast(a, b) ? a : b));
  return { ...args, stdin: Buffer.from(JSON.stringify({ ...JSON.parse(args.stdin.toString('utf8')), cniVersion: newest })) };
}

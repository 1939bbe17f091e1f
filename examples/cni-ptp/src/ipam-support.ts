// Whether the configured IPAM plugin speaks a spec version: GC and STATUS
// are forwarded only to one that has them (Debian's host-local 1.1.1 answers
// both with "unknown CNI_COMMAND").
import { delegateVersions, ipamType, versionAtLeast, type CmdArgs } from 'netns/cni';

/** Asked with the call's environment (its CNI_PATH): in resident mode process.env is the daemon's. */
export async function ipamSpeaks({ config, env }: Pick<CmdArgs, 'config' | 'env'>, version: string): Promise<boolean> {
  const versions = await delegateVersions(ipamType(config), env);
  return versions.some((v) => versionAtLeast(v, version));
}

// Whether the configured IPAM plugin speaks a spec version: GC and STATUS
// are forwarded only to one that has them (Debian's host-local 1.1.1 answers
// both with "unknown CNI_COMMAND").
import { delegateVersions, ipamType, versionAtLeast, type NetConf } from 'netns/cni';

export async function ipamSpeaks(config: NetConf, version: string): Promise<boolean> {
  const versions = await delegateVersions(ipamType(config));
  return versions.some((v) => versionAtLeast(v, version));
}

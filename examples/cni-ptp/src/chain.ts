// A plugin later in a chain passes the previous result on (SPEC §2): ptp's
// interfaces, addresses and routes are appended to it, its addresses'
// `interface` indices shifted to where its interfaces landed. The official
// ptp drops the previous result (a chain [loopback, ptp] loses lo's
// addresses); this one keeps it.
import type { Result } from 'netns/cni';

export function appendTo(prev: Result | undefined, own: Result): Result {
  if (!prev) return own;
  const offset = prev.interfaces?.length ?? 0;
  const dns = own.dns && Object.keys(own.dns).length > 0 ? own.dns : (prev.dns ?? {});
  return {
    cniVersion: own.cniVersion,
    interfaces: [...(prev.interfaces ?? []), ...(own.interfaces ?? [])],
    ips: [...(prev.ips ?? []), ...(own.ips ?? []).map((ip) => (ip.interface === undefined ? ip : { ...ip, interface: ip.interface + offset }))],
    routes: [...(prev.routes ?? []), ...(own.routes ?? [])],
    dns,
  };
}

// The configuration files a router's checked FRR spec becomes (pure: the
// tests of the text need no daemon). Generated OSPF puts every subnet of the
// router in area 0 with timers fast enough for a test.
import type { CheckedFrrSpec, FrrDaemon, LabOspfSpec } from './frr-spec.js';
import type { LabPlan } from './plan.js';

/** Each configuration file a router's daemons read, by file name, and which daemon reads which. */
export interface FrrFiles {
  files: Record<string, string>;
  daemons: { daemon: 'zebra' | FrrDaemon; file: string }[];
}

/** The files of router `key` in `plan`. */
export function frrFiles(key: string, spec: CheckedFrrSpec, plan: LabPlan): FrrFiles {
  if ('config' in spec) {
    return { files: { 'frr.conf': spec.config }, daemons: (['zebra', ...spec.daemons] as const).map((daemon) => ({ daemon, file: 'frr.conf' })) };
  }
  return {
    files: { 'zebra.conf': `hostname ${key}\n!\n`, 'ospfd.conf': ospfConfig(key, spec.ospf, plan) },
    daemons: [
      { daemon: 'zebra', file: 'zebra.conf' },
      { daemon: 'ospfd', file: 'ospfd.conf' },
    ],
  };
}

/**
 * ospfd's configuration: every interface of the router with the timers, a
 * link straight to another router point-to-point (no DR election to wait
 * for), one with no other router on its segment passive (no hellos to hosts);
 * FRR's LSA and SPF throttles (up to 5 s each by default) set to react at once.
 */
function ospfConfig(key: string, ospf: Required<LabOspfSpec>, plan: LabPlan): string {
  const routers = new Set(plan.nodes.filter((node) => node.kind === 'router').map((node) => node.key));
  const ends = plan.links.flatMap((link) => [[link.a, link.b, link.segment] as const, [link.b, link.a, link.segment] as const]).filter(([near]) => near.node === key);
  const lines = [`hostname ${key}`, '!'];
  for (const [near, far, segment] of ends) {
    const otherRouters = plan.links.some((link) => link.segment === segment && [link.a, link.b].some((end) => end.node !== key && routers.has(end.node)));
    lines.push(`interface ${near.iface}`, ` ip ospf hello-interval ${ospf.hello}`, ` ip ospf dead-interval ${ospf.dead}`);
    if (routers.has(far.node)) lines.push(' ip ospf network point-to-point');
    if (!otherRouters) lines.push(' ip ospf passive');
    lines.push('!');
  }
  const routerId = ends.flatMap(([near]) => near.addresses).find((cidr) => !cidr.includes(':'))?.split('/')[0];
  lines.push('router ospf');
  if (routerId) lines.push(` ospf router-id ${routerId}`);
  lines.push(' timers throttle lsa all 0', ' timers lsa min-arrival 0', ' timers throttle spf 0 50 1000');
  for (const subnet of new Set(ends.map(([, , segment]) => plan.segments[segment]!.subnet))) lines.push(` network ${subnet} area 0`);
  lines.push('!', '');
  return lines.join('\n');
}

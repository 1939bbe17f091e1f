// The lab benchmark's kernel floor (bench/lab-floor.c): the plan of
// bench/lab-topology.js as that program's steps. Each pair is made from its
// switch's side (the end enslaved as it is made, as createLab does), the
// other end then set up; lo up everywhere first; addresses, routes, then forwarding on routers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the floor's plan for `plan` into `dir`, namespaces named `${prefix}<node>`; returns its path. */
export function writeFloorPlan(plan, prefix, dir) {
  const ns = (node) => `${prefix}${node}`;
  const switches = new Set(plan.nodes.filter((n) => n.kind === 'switch').map((n) => n.name));
  const lines = [...plan.nodes.map((n) => `node ${ns(n.name)}`), ...plan.nodes.map((n) => `up ${ns(n.name)} lo 0`), ...[...switches].map((s) => `bridge ${ns(s)}`)];
  for (const { a, b } of plan.links) {
    const [maker, peer] = switches.has(b.node) ? [b, a] : [a, b];
    const enslaved = (end) => (switches.has(end.node) ? 1 : 0);
    lines.push(`veth ${ns(maker.node)} ${maker.ifname} ${ns(peer.node)} ${peer.ifname} ${enslaved(maker)}`, `up ${ns(peer.node)} ${peer.ifname} ${enslaved(peer)}`);
    for (const end of [a, b]) if (end.address) lines.push(`addr ${ns(end.node)} ${end.ifname} ${end.address}/24`);
  }
  for (const [node, routes] of Object.entries(plan.routes)) {
    for (const { to, via } of routes) lines.push(`route ${ns(node)} ${to} ${via} ${interfaceToward(plan, node, via)}`);
  }
  lines.push(...plan.nodes.filter((n) => n.kind === 'router').map((n) => `forward ${ns(n.name)}`));
  const path = join(dir, 'lab-floor.plan');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** The node's interface on the /24 of `via` (the floor names the route's device, as createLab does). */
function interfaceToward(plan, node, via) {
  const subnet = via.split('.').slice(0, 3).join('.');
  const end = plan.links.flatMap((l) => [l.a, l.b]).find((e) => e.node === node && e.address?.startsWith(`${subnet}.`));
  if (!end) throw new Error(`lab-floor: ${node} has no interface toward ${via}`);
  return end.ifname;
}

// The lab benchmark's `ip` baselines: the plan of bench/lab-topology.js as the
// shell scripts a careful person would write. Plain: one `ip -n NS …` per step
// (namespaces, lo, a bridge per switch, veth pairs made in a host or router
// with the peer sent to the switch, addresses, up, routes, then ip_forward
// through `ip netns exec … sysctl`), torn down by one `ip netns del` per
// namespace. Batch: the same steps as `ip -batch` files, one `ip -n NS -batch`
// per namespace; namespaces made and deleted by one `ip -batch` each.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes both variants' files for `plan` into `dir`, namespaces named
 * `${prefix}<node>`; returns { plain, batch }, each { build, teardown }: the
 * argv of a command that does it.
 */
export function writeIpScripts(plan, prefix, dir) {
  const order = buildOrder(plan);
  const steps = stepsByNode(plan, prefix);
  const forwarding = plan.nodes.filter((n) => n.kind === 'router').map((n) => `ip netns exec ${prefix}${n.name} sysctl -qw net.ipv4.ip_forward=1`);
  const script = (name, lines) => {
    const path = join(dir, name);
    writeFileSync(path, ['set -e', ...lines, ''].join('\n'));
    return ['bash', path];
  };
  const file = (name, lines) => {
    const path = join(dir, name);
    writeFileSync(path, [...lines, ''].join('\n'));
    return path;
  };
  const plain = {
    build: script('lab-ip.sh', [
      ...order.map((node) => `ip netns add ${prefix}${node}`),
      ...order.flatMap((node) => steps.get(node).map((step) => `ip -n ${prefix}${node} ${step}`)),
      ...forwarding,
    ]),
    teardown: script('lab-ip-teardown.sh', order.map((node) => `ip netns del ${prefix}${node}`)),
  };
  const namespaces = file('lab-netns.batch', order.map((node) => `netns add ${prefix}${node}`));
  const batch = {
    build: script('lab-ip-batch.sh', [
      `ip -batch ${namespaces}`,
      ...order.map((node) => `ip -n ${prefix}${node} -batch ${file(`lab-${node}.batch`, steps.get(node))}`),
      ...forwarding,
    ]),
    teardown: ['ip', '-batch', file('lab-netns-del.batch', order.map((node) => `netns del ${prefix}${node}`))],
  };
  return { plain, batch };
}

// Hosts and routers before switches (their veth pairs make the bridge ports),
// each in plan order (r1 makes the r1-r2 pair before r2 sets its end up).
function buildOrder(plan) {
  const names = (keep) => plan.nodes.filter(keep).map((n) => n.name);
  return [...names((n) => n.kind !== 'switch'), ...names((n) => n.kind === 'switch')];
}

/** Each node's `ip` steps (without `ip -n NS`), in the order they must run. */
function stepsByNode(plan, prefix) {
  const steps = new Map(plan.nodes.map((n) => [n.name, ['link set lo up']]));
  const switches = new Set(plan.nodes.filter((n) => n.kind === 'switch').map((n) => n.name));
  for (const name of switches) steps.get(name).push('link add br0 type bridge', 'link set br0 up');
  for (const { a, b } of plan.links) {
    const [maker, peer] = switches.has(a.node) ? [b, a] : [a, b]; // the pair is made where it is addressed
    steps.get(maker.node).push(`link add ${maker.ifname} type veth peer name ${peer.ifname} netns ${prefix}${peer.node}`);
    for (const end of [a, b]) {
      if (switches.has(end.node)) steps.get(end.node).push(`link set ${end.ifname} master br0 up`);
      else steps.get(end.node).push(`addr add ${end.address}/24 dev ${end.ifname}`, `link set ${end.ifname} up`);
    }
  }
  for (const [node, routes] of Object.entries(plan.routes)) {
    for (const { to, via } of routes) steps.get(node).push(`route add ${to} via ${via}`);
  }
  return steps;
}

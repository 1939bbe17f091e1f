// The topology of the lab benchmark (issue 26), as one plan every
// implementation builds: 100 hosts on 4 switches (25 each), router r1 on s1 and
// s2, r2 on s3 and s4, r1-r2 a direct link. Addressing follows createLab's rule:
// one /24 per segment (a switch, or a direct link) in the order segments first
// appear in the links, 10.0.1.0/24 upward; addresses in a segment in link order
// from .1. Hosts get a default route via their segment's router; each router
// routes the other router's subnets via the direct link.

// LAB_BENCH_HOSTS_PER_SWITCH=250: the 1,000-host lab (a bridge takes 1,023 ports)
const HOSTS_PER_SWITCH = Number(process.env.LAB_BENCH_HOSTS_PER_SWITCH ?? 25);
const SWITCHES = 4;

/** The createLab spec (netns/testing) for this topology. */
export function labSpec() {
  const hosts = {};
  const switches = {};
  const links = [];
  for (let s = 1; s <= SWITCHES; s++) {
    switches[`s${s}`] = {};
    for (let i = 1; i <= HOSTS_PER_SWITCH; i++) {
      const host = `h${(s - 1) * HOSTS_PER_SWITCH + i}`;
      hosts[host] = {};
      links.push([host, `s${s}`]);
    }
  }
  links.push(['r1', 's1'], ['r1', 's2'], ['r2', 's3'], ['r2', 's4'], ['r1', 'r2']);
  return { hosts, switches, routers: { r1: {}, r2: {} }, links, ipv6: false };
}

/**
 * The plan the baselines build from labSpec(): `nodes` ({ name, kind }),
 * `links` ({ a, b, segment } with each end's interface and address; a switch
 * end is a bridge port named for its peer), `routes` per node ({ to, via }).
 */
export function labPlan(spec = labSpec()) {
  const kinds = new Map([
    ...Object.keys(spec.hosts).map((n) => [n, 'host']),
    ...Object.keys(spec.switches).map((n) => [n, 'switch']),
    ...Object.keys(spec.routers).map((n) => [n, 'router']),
  ]);
  const segments = new Map(); // segment key -> { subnet, next host part, members }
  const interfaceCount = new Map();
  const links = spec.links.map(([a, b]) => {
    const key = segmentKey(kinds, a, b);
    if (!segments.has(key)) segments.set(key, { prefix: `10.0.${segments.size + 1}`, next: 1, members: [] });
    const segment = segments.get(key);
    const end = (node, peer) => {
      if (kinds.get(node) === 'switch') return { node, ifname: peer };
      const ifname = `eth${interfaceCount.get(node) ?? 0}`;
      interfaceCount.set(node, Number(ifname.slice(3)) + 1);
      const address = `${segment.prefix}.${segment.next++}`;
      segment.members.push({ node, address });
      return { node, ifname, address };
    };
    return { a: end(a, b), b: end(b, a), segment: key, subnet: `${segment.prefix}.0/24` };
  });
  const nodes = [...kinds].map(([name, kind]) => ({ name, kind }));
  return { nodes, links, routes: routesOf(kinds, segments) };
}

function segmentKey(kinds, a, b) {
  if (kinds.get(a) === 'switch' && kinds.get(b) === 'switch') throw new Error(`lab plan: ${a}-${b} joins two switches`);
  if (kinds.get(a) === 'switch') return a;
  if (kinds.get(b) === 'switch') return b;
  return `${a}-${b}`;
}

// Hosts: a default route via the router on their segment. Routers: each subnet
// they are not on, via a router they share a segment with that is on it (one
// hop is all this topology has; anything farther is refused).
function routesOf(kinds, segments) {
  const routes = new Map([...kinds.keys()].map((n) => [n, []]));
  const onSegment = (node) => [...segments.values()].filter((s) => s.members.some((m) => m.node === node));
  for (const [node, kind] of kinds) {
    if (kind === 'host') {
      const gateway = onSegment(node)[0].members.find((m) => kinds.get(m.node) === 'router');
      routes.get(node).push({ to: 'default', via: gateway.address });
    }
    if (kind !== 'router') continue;
    const mine = onSegment(node);
    for (const segment of segments.values()) {
      if (mine.includes(segment)) continue;
      const via = mine.flatMap((s) => s.members).find((m) => kinds.get(m.node) === 'router' && m.node !== node && segment.members.some((x) => x.node === m.node));
      if (!via) throw new Error(`lab plan: ${node} has no one-hop route to ${segment.prefix}.0/24`);
      routes.get(node).push({ to: `${segment.prefix}.0/24`, via: via.address });
    }
  }
  return Object.fromEntries(routes);
}

/** Pings that cross both routers, both ways, and one on a switch: [from, to-address]. */
export function checkPings(plan) {
  const address = (node) => plan.links.flatMap((l) => [l.a, l.b]).find((e) => e.node === node && e.address).address;
  return [
    ['h1', address('h25')],
    ['h1', address('h26')],
    ['h1', address('h100')],
    ['h75', address('h30')],
    ['h100', address('r1')],
  ];
}

"""The lab benchmark's Mininet baseline (bench/lab.js runs it, one round per
process, inside a scratch namespace of its own).

Builds bench/lab-topology.js's plan with Mininet's API the way its
examples/linuxrouter.py does: hosts with an address and a default route,
routers as Nodes with ip_forward=1, switches Linux bridges (LinuxBridge, each
in a namespace of its own, as the other implementations have them), no
controller. Times net.build() + net.start() + the routers' static routes,
then net.stop(). Prints one JSON line: buildMs, stopMs, the process's peak
RSS and the node shells' PSS (KiB), and the pings' results when asked.

Usage: lab-mininet.py PLAN.json PIDFILE [verify]
Every node shell's pid is appended to PIDFILE as it starts, so the caller
can kill what a failed round leaves (they run detached, in their own
sessions).
"""
import json
import resource
import sys
import time

from mininet.net import Mininet
from mininet.node import Node
from mininet.nodelib import LinuxBridge
from mininet.topo import Topo


class LinuxRouter(Node):
    "A Node with IP forwarding, as in Mininet's examples/linuxrouter.py."

    def config(self, **params):
        super().config(**params)
        self.cmd('sysctl net.ipv4.ip_forward=1')

    def terminate(self):
        self.cmd('sysctl net.ipv4.ip_forward=0')
        super().terminate()


class PlanTopo(Topo):
    "The plan's nodes and links, with its addresses."

    def build(self, plan):
        first = {}
        for link in plan['links']:
            for end in (link['a'], link['b']):
                first.setdefault(end['node'], end.get('address'))
        for node in plan['nodes']:
            name, kind = node['name'], node['kind']
            if kind == 'switch':
                self.addSwitch(name, cls=LinuxBridge, inNamespace=True)
            elif kind == 'router':
                self.addNode(name, cls=LinuxRouter, ip=f"{first[name]}/24")
            else:
                gateway = plan['routes'][name][0]['via']
                self.addHost(name, ip=f"{first[name]}/24", defaultRoute=f"via {gateway}")
        routers = {node['name'] for node in plan['nodes'] if node['kind'] == 'router'}
        # A host's one address is its ip=; a router's other interfaces take theirs from the link.
        ip_param = lambda end: {'ip': f"{end['address']}/24"} if end['node'] in routers else {}
        for link in plan['links']:
            a, b = link['a'], link['b']
            self.addLink(a['node'], b['node'], params1=ip_param(a), params2=ip_param(b))


class RecordingMininet(Mininet):
    "Mininet that writes each node shell's pid to a file as soon as it exists."

    def __init__(self, pidfile, **kwargs):
        self.pidfile = pidfile
        super().__init__(**kwargs)

    def addHost(self, name, cls=None, **params):
        return self.recorded(super().addHost(name, cls=cls, **params))

    def addSwitch(self, name, cls=None, **params):
        return self.recorded(super().addSwitch(name, cls=cls, **params))

    def recorded(self, node):
        self.pidfile.write(f"{node.pid}\n")
        self.pidfile.flush()
        return node


def add_router_routes(net, plan):
    for node in plan['nodes']:
        if node['kind'] == 'router':
            for route in plan['routes'][node['name']]:
                net[node['name']].cmd(f"ip route add {route['to']} via {route['via']}")


def shells_pss_kib(net):
    "The node shells' memory, shared pages split among their users (RSS would count bash 106 times)."
    total = 0
    for node in net.hosts + net.switches:
        with open(f"/proc/{node.pid}/smaps_rollup") as rollup:
            total += next(int(line.split()[1]) for line in rollup if line.startswith('Pss:'))
    return total


def pings(net, checks):
    "Each [from, address] as [from, address, ok]."
    return [[src, dst, ' 0% packet loss' in net[src].cmd(f"ping -c1 -W2 {dst}")] for src, dst in checks]


def main():
    plan_path, pid_path = sys.argv[1], sys.argv[2]
    verify = len(sys.argv) > 3 and sys.argv[3] == 'verify'
    with open(plan_path) as f:
        plan = json.load(f)
    # Mininet.init() would raise machine-wide limits (fs.file-max, kernel.pty.max,
    # the root namespace's buffers): this machine is shared. Only this process's
    # own descriptor limit is raised, which is all 106 node shells need.
    Mininet.inited = True
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 16384)), hard))
    with open(pid_path, 'a') as pidfile:
        net = RecordingMininet(pidfile, topo=PlanTopo(plan=plan), switch=LinuxBridge, controller=None,
                               build=False, autoSetMacs=False, waitConnected=False)
        try:
            start = time.perf_counter()
            net.build()
            net.start()
            add_router_routes(net, plan)
            built = time.perf_counter()
            result = {'shellsPssKib': shells_pss_kib(net)}
            if verify:
                result['pings'] = pings(net, plan['checks'])
        finally:
            stopping = time.perf_counter()
            net.stop()
            stopped = time.perf_counter()
    result.update(buildMs=(built - start) * 1000, stopMs=(stopped - stopping) * 1000,
                  peakRssKib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(json.dumps(result))


if __name__ == '__main__':
    main()

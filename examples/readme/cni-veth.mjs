#!/usr/bin/env node
// A CNI plugin: a veth pair into the container, with the configuration's address on it.
import { NetNS } from 'netns';
import { CniError, pluginMain, prevResultOf } from 'netns/cni';
import { checkInterface, configureInterface, deleteHostEnd, hostAlias, setupVeth } from 'netns/cni/plumbing';

const host = NetNS.current(); // the runtime runs a plugin in the host's namespace, once per command

await pluginMain(
  {
    add: async ({ config, netns, ifname, containerId: containerID }) => {
      if (typeof config.address !== 'string') throw new CniError(7, 'address (a CIDR) is required');
      const container = NetNS.open(netns);
      try {
        const veth = await setupVeth({ containerNs: container, hostNs: host, ifname, mtu: config.mtu,
          hostAlias: hostAlias(config.name, { containerID, ifname }) }); // how DEL finds the pair again
        const result = { cniVersion: '1.1.0', interfaces: [veth.host, veth.container], ips: [{ address: config.address, interface: 1 }] };
        await configureInterface(container, ifname, result); // the address, the link up
        return result; // printed in the configuration's cniVersion
      } finally {
        container.close();
      }
    },
    // DEL must succeed when there is nothing left, and when the container's namespace is gone.
    del: ({ config, containerId: containerID, ifname }) => deleteHostEnd(host, config.name, { containerID, ifname }),
    check: async ({ config, netns, ifname }) => {
      const container = NetNS.open(netns);
      try {
        await checkInterface(container, ifname, prevResultOf(config), { kind: 'veth' }); // a difference: code 110
      } finally {
        container.close();
      }
    },
  },
  { versions: ['0.4.0', '1.0.0', '1.1.0'], about: 'cni-veth: a veth pair and an address' },
);

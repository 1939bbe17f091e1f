// A lab's way out (Mininet's NAT node, a container network's gateway): the
// router given `nat: {}` gets an interface `uplink` whose peer is in the
// namespace that built the lab (the machine's, or the test's namespace it
// runs in), an IPv4 /30 between them, and masquerades what it sends out of
// it; every other node's IPv4 default route leads to it. So a node reaches
// the machine's addresses, and beyond them wherever the machine itself
// forwards and masquerades that subnet (the lab never changes the machine's
// sysctls or firewall). The machine's end goes with the router's namespace.
import { ErrorCodes, netnsError } from '../../core/errors.js';
import { NetNS } from '../../netns.js';
import { openNetlink } from '../../netlink/index.js';
import { commit } from '../../nftables/batch.js';
import { newChain } from '../../nftables/chains.js';
import { NFPROTO_INET } from '../../nftables/constants.js';
import { masquerade, matchFamily, matchOutputName } from '../../nftables/expressions.js';
import { newTable, type TableName } from '../../nftables/messages.js';
import { newRule } from '../../nftables/rules.js';
import { step, type LabNode } from './build.js';
import { nftablesOf } from './impair.js';
import { UPLINK, type PlannedNat } from './nat-plan.js';

const TABLE: TableName = { family: NFPROTO_INET, table: 'netns_lab_nat' };

/** The IPv4 subnets the machine (this process's namespace) has addresses or routes in, which an uplink must not overlap. */
export async function machineSubnets(): Promise<string[]> {
  const nl = await openNetlink();
  try {
    const addresses = await nl.addresses.list({ family: 4 });
    const routes = await nl.routes.list({ family: 4, table: 'all' });
    return [
      ...addresses.map((address) => `${address.address}/${address.prefixLength}`),
      // a default route covers everything and reserves nothing
      ...routes.flatMap((route) => (route.destination === 'default' || route.destination.endsWith('/0') ? [] : [route.destination])),
    ];
  } finally {
    nl.close();
  }
}

/** Makes the uplink's veth pair, the machine's end sent to this process's namespace. */
export async function addUplink(nat: PlannedNat, router: LabNode): Promise<void> {
  const machine = NetNS.current();
  try {
    await step(router, `link add ${UPLINK} type veth peer name ${nat.machineIface} netns <the machine's>`, (nl) =>
      nl.links.add({ kind: 'veth', name: UPLINK, up: true, peer: { name: nat.machineIface, netns: machine } }),
    );
  } finally {
    machine.close();
  }
}

/** Sets the uplink up once made: its addresses, the router's default route and masquerade. */
export async function configureUplink(nat: PlannedNat, router: LabNode): Promise<void> {
  await step(router, `addr add ${nat.routerAddress} dev ${UPLINK}`, (nl) => nl.addresses.add({ link: UPLINK, address: nat.routerAddress }));
  const nl = await openNetlink();
  try {
    await nl.addresses.add({ link: nat.machineIface, address: nat.machineAddress });
    await nl.links.up(nat.machineIface);
  } catch (error) {
    throw netnsError(ErrorCodes.FIXTURE, `createLab: the machine's end of the NAT uplink (${nat.machineIface} ${nat.machineAddress}): ${(error as Error).message}`, { cause: error });
  } finally {
    nl.close();
  }
  const gateway = nat.machineAddress.split('/')[0]!;
  await step(router, `route add default via ${gateway} dev ${UPLINK}`, (nl) => nl.routes.add({ destination: 'default', gateway, device: UPLINK }));
  const nft = await nftablesOf(router);
  await step(router, `nft add rule inet ${TABLE.table} postrouting meta nfproto ipv4 oifname ${UPLINK} masquerade`, async () => {
    const chain = 'postrouting';
    commit(nft, [
      newTable(TABLE),
      newChain(TABLE, chain, { type: 'nat', hook: 'postrouting', priority: 100 }),
      newRule({ ...TABLE, chain }, [...matchFamily(4), ...matchOutputName(UPLINK), masquerade()]),
    ]);
  });
}

/**
 * Deletes the machine's end of the uplink (the router's goes with it): the
 * kernel frees a deleted namespace, and so this pair, only some time after
 * delete() returns. Never throws: an end gone already, or that cannot go, is left to the kernel.
 */
export async function removeUplink(nat: PlannedNat): Promise<void> {
  try {
    const nl = await openNetlink();
    try {
      await nl.links.delete(nat.machineIface);
    } finally {
      nl.close();
    }
  } catch {
    // gone with the router's namespace already
  }
}

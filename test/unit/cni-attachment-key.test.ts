// The attachment key, pinned to its value: it names cni-ptp's records on disk
// and starts every host veth's alias and masquerade comment, so a key computed
// differently after an upgrade would make DEL and GC blind to what an earlier
// version made (and, computed from fewer fields, let two attachments share
// their host resources). No Go plugin is needed: the values are literals.
import { describe, expect, it } from 'vitest';
import { attachmentKey } from '../../dist/cni/plumbing.js';

/** <sha512(network)[:16]>-<sha512(`${ifname}:${containerID}`)[:16]>, worked out once by hand (sha512sum). */
const PINNED = [
  { network: 'net', containerID: 'ctr', ifname: 'eth0', key: 'a4861f4ae9f7d238-3eefb17f6fcf1a94' },
  { network: 'net2', containerID: 'ctr', ifname: 'eth0', key: 'a5855bd82c6a57c4-3eefb17f6fcf1a94' },
  { network: 'net', containerID: 'ctr2', ifname: 'eth0', key: 'a4861f4ae9f7d238-a09553539d4cc24c' },
  { network: 'net', containerID: 'ctr', ifname: 'eth1', key: 'a4861f4ae9f7d238-ce355abcde7dcf83' },
];

describe('the attachment key', () => {
  it('is the pinned value for each network, container id and ifname', () => {
    for (const { network, containerID, ifname, key } of PINNED) expect(attachmentKey(network, { containerID, ifname }), `${network} ${containerID} ${ifname}`).toBe(key);
  });

  it('changes with each of network, container id and ifname alone', () => {
    const keys = PINNED.map(({ network, containerID, ifname }) => attachmentKey(network, { containerID, ifname }));
    expect(new Set(keys).size).toBe(PINNED.length);
  });
});

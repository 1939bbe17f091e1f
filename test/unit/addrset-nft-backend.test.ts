// NftBackend through its exec seam: what it sends to nft, how it reads nft's
// JSON, and how nft's failures become coded errors, without privileges.
import { describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { NftBackend, nftMissing, type NftExec } from '../../dist/addrset/nft-backend.js';

interface Call {
  args: string[];
  input: string;
  inheritFd: number | null;
}

function fakeNft(answer: (call: Call) => { stdout?: string; stderr?: string; code?: number }): { exec: NftExec; calls: Call[] } {
  const calls: Call[] = [];
  const exec: NftExec = async (args, input, inheritFd) => {
    const call = { args, input, inheritFd };
    calls.push(call);
    const { stdout = '', stderr = '', code = 0 } = answer(call);
    return { stdout, stderr, code };
  };
  return { exec, calls };
}

const LISTING = JSON.stringify({
  nftables: [
    { metainfo: { version: '1.0.6', json_schema_version: 1 } },
    { table: { family: 'inet', name: 't' } },
    { set: { family: 'inet', table: 't', name: 'as_owners', type: 'ifname', elem: [{ elem: { val: 'as4_0123456789a', comment: 'v1 o=b3duZXI' } }] } },
    { set: { family: 'inet', table: 't', name: 'as4_0123456789a', type: 'ipv4_addr', flags: ['interval'], elem: [
          '10.0.0.1',
          { prefix: { addr: '10.1.0.0', len: 16 } },
          { range: ['10.2.0.1', '10.2.0.9'] },
          // added by hand with a comment or a timeout: nft wraps them
          { elem: { val: '10.3.0.1', comment: 'by hand' } },
          { elem: { val: { prefix: { addr: '10.4.0.0', len: 24 } }, timeout: 30, expires: 29 } },
        ] } },
    { set: { family: 'inet', table: 't', name: 'allowlist', type: 'ether_addr' } },
  ],
});

const lock = { fd: 42, release() {} };
const ref = { family: 'inet', table: 't' } as const;

describe('NftBackend (fake nft)', () => {
  it('passes the writer lock to every transaction and renders text when nft takes the table name', async () => {
    const { exec, calls } = fakeNft(() => ({}));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    expect(backend.mode).toBe('text');
    await backend.apply([{ op: 'createSet', name: 'as4_0123456789a', family: 4 }], lock);
    const sent = calls.at(-1)!;
    expect(sent).toMatchObject({ args: ['-f', '-'], inheritFd: 42 });
    expect(sent.input).toBe('add set inet t as4_0123456789a { type ipv4_addr; flags interval; }\nflush set inet t as4_0123456789a\n');
    expect(calls.slice(0, 2).map((call) => call.inheritFd)).toEqual([null, null]); // probes hold no lock
  });

  it('falls back to JSON input when nft refuses the table name in text (a keyword)', async () => {
    const { exec, calls } = fakeNft((call) => (call.args[0] === '--check' ? { code: 1, stderr: 'Error: syntax error' } : {}));
    const backend = await NftBackend.create(NetNS.current(), { family: 'inet', table: 'policy' }, exec);
    expect(backend.mode).toBe('json');
    await backend.apply([{ op: 'flushSet', name: 's' }], lock);
    expect(calls.at(-1)!.args).toEqual(['-j', '-f', '-']);
    expect(JSON.parse(calls.at(-1)!.input)).toEqual({ nftables: [{ flush: { set: { family: 'inet', table: 'policy', name: 's' } } }] });
  });

  it('reads sets, elements (address, prefix, range, wrapped with a comment or timeout) and records from one listing', async () => {
    const { exec } = fakeNft(() => ({ stdout: LISTING }));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    const view = await backend.read({ elements: true, registry: 'as_owners' });
    expect(view.records).toEqual(new Map([['as4_0123456789a', 'v1 o=b3duZXI']]));
    const set = view.sets.get('as4_0123456789a')!;
    expect({ ...set, elements: set.elements!.map((entry) => entry.text) }).toEqual({ name: 'as4_0123456789a', family: 4, elements: ['10.0.0.1', '10.1.0.0/16', '10.2.0.1-10.2.0.9', '10.3.0.1', '10.4.0.0/24'] });
    expect(view.sets.get('allowlist')).toMatchObject({ family: 'other' });
    expect(view.sets.has('as_owners')).toBe(false);
  });

  it('maps nft failures to codes and a missing table to an empty view', async () => {
    const cases: [string, string][] = [
      ['Error: Could not process rule: Device or resource busy', 'EBUSY'],
      ['Error: Could not process rule: No such file or directory', 'ENOENT'],
      ['/dev/stdin:1:46-53: Error: element does not exist', 'ENOENT'],
      ['Error: Could not process rule: File exists', 'EEXIST'],
      ['Error: Could not process rule: Operation not permitted', 'EPERM'],
      ['Error: interval overlaps with an existing one', 'ERR_NETNS_ADDRSET_OVERLAP'],
      ['netlink: Error: Could not process rule: Message too long', 'EMSGSIZE'], // nft in a user namespace, batch over wmem_default
      ['Error: syntax error, unexpected junk', 'ERR_NETNS_NFT'],
    ];
    for (const [stderr, code] of cases) {
      const { exec } = fakeNft((call) => (call.args.includes('--version') || call.args[0] === '--check' ? {} : { code: 1, stderr }));
      const backend = await NftBackend.create(NetNS.current(), ref, exec);
      await expect(backend.apply([{ op: 'deleteSet', name: 's' }], lock)).rejects.toMatchObject({ code, message: expect.stringContaining(stderr.replace(/^Error: /, '')) });
    }
    const { exec } = fakeNft((call) => (call.args.includes('list') || call.input.includes('"list"') ? { code: 1, stderr: 'Error: No such file or directory' } : {}));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    expect(await backend.read({ elements: false, registry: 'as_owners' })).toMatchObject({ tableExists: false, sets: new Map() });
  });

  // nft's `add table` resets the flags of a table that is there: a dormant one would wake, and its chains filter.
  it('leaves `add table` out when the table is there, and names nft 1.0.6 cutting its JSON listing of a table with flags', async () => {
    const { exec, calls } = fakeNft((call) => (call.input.includes('"list"') ? { stdout: LISTING } : {}));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    await backend.apply([{ op: 'addTable' }, { op: 'addRegistry', name: 'as_owners' }], lock);
    expect(calls.at(-1)!.input).toBe('add set inet t as_owners { type ifname; }\n');
    const cut = fakeNft((call) => (call.input.includes('"list"') ? { stdout: '{"nftables": [{"table": {"family": "inet", "name": "t", "handle": 1, "flags": \n' } : {}));
    const dormant = await NftBackend.create(NetNS.current(), ref, cut.exec);
    await expect(dormant.apply([{ op: 'addTable' }], lock)).rejects.toMatchObject({ code: 'ERR_NETNS_NFT', message: expect.stringMatching(/a table with flags, such as a dormant one, badly/) });
    expect(cut.calls.filter((call) => call.args[0] !== '--check' && call.input.includes('add table'))).toEqual([]); // only the probe's, which changes nothing
  });

  it('says so when nft prints something that is not nft JSON', async () => {
    const { exec } = fakeNft((call) => (call.input.includes('"list"') ? { stdout: 'not json' } : {}));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    await expect(backend.read({ elements: true, registry: 'as_owners' })).rejects.toMatchObject({ code: 'ERR_NETNS_NFT' });
  });
});

describe('NftBackend (fake nft): the exact texts and listings', () => {
  const failing = (stderr: string, code = 1) => fakeNft((call) => (call.args.includes('--version') || call.args[0] === '--check' ? {} : { code, stderr }));

  it("quotes nft's first error line, else its whole stderr, else its exit status, and keeps stderr on the error", async () => {
    const cases: [string, string][] = [
      ['In file included from x:\nError: Could not process rule: No such file or directory\ndelete set inet t s\n', 'nft -f -: Could not process rule: No such file or directory'],
      ['  something odd\n', 'nft -f -: something odd'],
      ['', 'nft -f -: exit 1'],
      ['Error: syntax error, unexpected junk', 'nft -f -: syntax error, unexpected junk'],
    ];
    for (const [stderr, message] of cases) {
      const backend = await NftBackend.create(NetNS.current(), ref, failing(stderr).exec);
      await expect(backend.apply([{ op: 'deleteSet', name: 's' }], lock), JSON.stringify(stderr)).rejects.toMatchObject({ message, stderr });
    }
  });

  it('names the package to install when nft is missing, and asks nft its version with no input', async () => {
    expect(nftMissing()).toMatchObject({ code: 'ERR_NETNS_NFT_MISSING', message: 'nft is not installed: install the Debian package nftables (apt-get install nftables)' });
    const { exec, calls } = fakeNft(() => ({}));
    await NftBackend.create(NetNS.current(), ref, exec);
    expect(calls[0]).toEqual({ args: ['--version'], input: '', inheritFd: null });
  });

  it('reads records with and without comments, and takes as ours only interval sets of an address type with no other flag', async () => {
    const listing = JSON.stringify({
      nftables: [
        { table: { family: 'inet', name: 't' } },
        { set: { family: 'inet', table: 't', name: 'as_owners', type: 'ifname', elem: ['bare', { elem: { val: 'uncommented' } }, { elem: { val: 'commented', comment: 'c' } }] } },
        { set: { family: 'inet', table: 't', name: 'v6', type: 'ipv6_addr', flags: ['interval'], elem: ['fd00::1', { elem: { val: { concat: ['x'] } } }] } },
        { set: { family: 'inet', table: 't', name: 'empty', type: 'ipv4_addr', flags: ['interval'] } },
        { set: { family: 'inet', table: 't', name: 'timed', type: 'ipv4_addr', flags: ['interval', 'timeout'], elem: ['10.0.0.1'] } },
        { set: { family: 'inet', table: 't', name: 'constant', type: 'ipv4_addr', flags: ['constant'], elem: ['10.0.0.1'] } },
        { set: { family: 'inet', table: 't', name: 'ports', type: 'inet_service', flags: ['interval'], elem: [80] } },
      ],
    });
    const { exec } = fakeNft(() => ({ stdout: listing }));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    const view = await backend.read({ elements: true, registry: 'as_owners' });
    expect(view.records).toEqual(new Map([['bare', ''], ['uncommented', ''], ['commented', 'c']]));
    const sets = Object.fromEntries([...view.sets].map(([name, set]) => [name, [set.family, set.elements?.map((entry) => entry.text) ?? null]]));
    expect(sets).toEqual({ v6: [6, ['fd00::1']], empty: [4, []], timed: ['other', null], constant: ['other', null], ports: ['other', null] });
  });

  it('lists tersely when elements are not wanted, and asks for the records only when the registry is there', async () => {
    const withRegistry = fakeNft((call) => (call.input.includes('"list"') ? { stdout: LISTING } : {}));
    const backend = await NftBackend.create(NetNS.current(), ref, withRegistry.exec);
    const view = await backend.read({ elements: false, registry: 'as_owners' });
    const lists = withRegistry.calls.filter((call) => call.input.includes('"list"'));
    expect(lists.map((call) => [call.args, JSON.parse(call.input)])).toEqual([
      [['-j', '-t', '-f', '-'], { nftables: [{ list: { table: { family: 'inet', name: 't' } } }] }],
      [['-j', '-f', '-'], { nftables: [{ list: { set: { family: 'inet', table: 't', name: 'as_owners' } } }] }],
    ]);
    expect(view.records).toEqual(new Map([['as4_0123456789a', 'v1 o=b3duZXI']]));
    const withoutRegistry = fakeNft((call) => (call.input.includes('"list"') ? { stdout: JSON.stringify({ nftables: [{ table: { family: 'inet', name: 't' } }] }) } : {}));
    await (await NftBackend.create(NetNS.current(), ref, withoutRegistry.exec)).read({ elements: false, registry: 'as_owners' });
    expect(withoutRegistry.calls.filter((call) => call.input.includes('"list"'))).toHaveLength(1);
  });

  it('reads no records from a registry that has none', async () => {
    const listing = JSON.stringify({ nftables: [{ table: { family: 'inet', name: 't' } }, { set: { family: 'inet', table: 't', name: 'as_owners', type: 'ifname' } }] });
    const { exec } = fakeNft(() => ({ stdout: listing }));
    const view = await (await NftBackend.create(NetNS.current(), ref, exec)).read({ elements: true, registry: 'as_owners' });
    expect(view.records).toEqual(new Map());
    expect(view.sets).toEqual(new Map());
  });

  it('takes only a missing table as an empty view: any other listing failure is passed on', async () => {
    const { exec } = fakeNft((call) => (call.input.includes('"list"') ? { code: 1, stderr: 'Error: Could not process rule: Operation not permitted' } : {}));
    const backend = await NftBackend.create(NetNS.current(), ref, exec);
    await expect(backend.read({ elements: true, registry: 'as_owners' })).rejects.toMatchObject({ code: 'EPERM' });
  });

  it('says what is wrong with a listing that is not nft JSON', async () => {
    for (const [stdout, reason] of [['{"x": 1}', 'no "nftables" array'], ['{"nftables": {}}', 'no "nftables" array']]) {
      const { exec } = fakeNft((call) => (call.input.includes('"list"') ? { stdout } : {}));
      const backend = await NftBackend.create(NetNS.current(), ref, exec);
      await expect(backend.read({ elements: true, registry: 'as_owners' })).rejects.toMatchObject({ code: 'ERR_NETNS_NFT', message: `nft printed a listing that is not nft JSON: ${reason}` });
    }
  });
});

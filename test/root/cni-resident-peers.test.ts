// A resident daemon's peers are not all well-behaved shims: one may trickle
// its request a byte at a time, or keep its connection open after the answer.
// Neither may hold a connection for ever, nor keep a daemon told to stop from
// stopping (a service manager's SIGTERM would then end in SIGKILL mid-call).
// The daemon runs in this process; the peers are Python (Node cannot send the
// namespace descriptor a request starts with).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveResident, type ResidentServer } from '../../dist/cni/index.js';
import { privileged } from '../helpers/privileges.js';

// argv: socket, mode. "hold": a silent connection, then a VERSION call on a second one, whose
// answer is printed; both are kept open, and what the silent one is told is printed.
// "trickle": a request announcing 100 kB, sent a byte every 20 ms; "dropped" once the daemon drops it.
const PEER = `
import os, socket, struct, sys, time
path, mode = sys.argv[1], sys.argv[2]
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
def opening(s, env_length):
    fd = os.open('/proc/self/ns/net', os.O_RDONLY)
    socket.send_fds(s, [b'NCS3' + struct.pack('>II', env_length, 0)], [fd])
    os.close(fd)
def answer(s):
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk
def stdout_of(data):
    return data[16:16 + struct.unpack('>I', data[8:12])[0]].decode().strip()
if mode == 'hold':
    silent = connect()
    s = connect()
    env = b'CNI_COMMAND=VERSION\\0'
    opening(s, len(env))
    s.sendall(env)
    print('answered ' + stdout_of(answer(s)), flush=True)
    print('silent ' + stdout_of(answer(silent)), flush=True)
    sys.stdin.read()
else:
    s = connect()
    opening(s, 100000)
    try:
        while True:
            s.send(b'A')
            time.sleep(0.02)
    except OSError:
        print('dropped', flush=True)
`;

const handlers = { add: () => ({ cniVersion: '1.0.0' }), del: () => {}, check: () => {} };
const info = { versions: ['1.0.0'] };

/** Lines the peer prints, as they come. */
function lines(child: ChildProcess): AsyncIterator<string> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    buffered += text;
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    queue.push(...parts);
    wake?.();
  });
  return {
    async next() {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return { value: queue.shift()!, done: false };
    },
  };
}

describe.skipIf(!privileged)('resident daemon and peers that hold their connection', () => {
  let dir: string;
  let peerScript: string;
  let server: ResidentServer | undefined;
  const peers: ChildProcess[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netns-resident-peers-'));
    peerScript = join(dir, 'peer.py');
    writeFileSync(peerScript, PEER);
  });
  afterEach(async () => {
    for (const peer of peers.splice(0)) peer.kill('SIGKILL');
    await server?.close();
    server = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const peer = (mode: string): ChildProcess => {
    const child = spawn('python3', [peerScript, join(dir, 'd.sock'), mode], { stdio: ['pipe', 'pipe', 'inherit'] });
    peers.push(child);
    return child;
  };
  const serve = async (requestTimeoutMs: number) =>
    (server = await serveResident(handlers, info, { socketPath: join(dir, 'd.sock'), handleSignals: false, requestTimeoutMs }));

  it('stops while a peer keeps its connection open after its answer (a grace of a second, not for ever), and tells a silent peer to try again (code 11)', async () => {
    const daemon = await serve(600_000);
    const said = lines(peer('hold'));
    expect((await said.next()).value).toMatch(/^answered \{"cniVersion"/);
    // The silent peer connected before the call that was answered, so it has been accepted.
    await daemon.close();
    const silent = (await said.next()).value;
    expect(JSON.parse(silent.slice('silent '.length))).toMatchObject({ code: 11, msg: expect.stringContaining('is stopping: try again') });
  });

  it('drops a peer that trickles its request past requestTimeoutMs, however often its bytes come', async () => {
    await serve(300);
    const said = lines(peer('trickle'));
    expect((await said.next()).value).toBe('dropped');
  });
});

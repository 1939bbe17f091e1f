// What the resident daemon makes of the descriptors sent with a request
// (src/cni/daemon/caller-netns.ts), with serveResident in this process (its
// root tests run the daemon in a child, where no mutant reaches) and a client
// in Python, which can send any descriptors: none, a file, two, or the
// client's own namespace. Each bad one is answered by name, every descriptor
// received is closed, and the daemon serves the next request.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveResident, type ResidentServer } from '../../dist/cni/index.js';
import { writeRawClient } from '../helpers/resident-raw-client.js';

const dir = mkdtempSync(join(tmpdir(), 'netns-caller-netns-'));
const socketPath = join(dir, 'p.sock');
let client: string;
const file = join(dir, 'not-a-namespace');
const ownNet = `net:[${statSync('/proc/self/ns/net').ino}]`;
let server: ResidentServer;

beforeAll(async () => {
  client = writeRawClient(dir);
  writeFileSync(file, 'x');
  server = await serveResident({ add: () => ({ cniVersion: '1.0.0' }), del: () => {}, check: () => {} }, { versions: ['1.0.0'] }, { socketPath, handleSignals: false });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const send = async (files: string[]) => JSON.parse((await promisify(execFile)('python3', [client, socketPath, 'NCS3', ...files])).stdout) as { code?: number; msg?: string; supportedVersions?: string[] };
/** This process's descriptors that point at `target`. */
const held = (target: string) => readdirSync('/proc/self/fd').filter((fd) => {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`) === target;
  } catch {
    return false; // closed while listed (the one readdir used)
  }
}).length;

describe('the descriptors sent with a resident request', () => {
  it('answer a request with none, two, or one that is not a network namespace as a bad request, by name', async () => {
    const bad = 'bad request to the resident daemon: ';
    expect(await send([])).toMatchObject({ code: 999, msg: `${bad}no network namespace came with the request` });
    expect(await send(['/proc/self/ns/net', '/proc/self/ns/net'])).toMatchObject({ code: 999, msg: `${bad}2 descriptors came with the request, where the shim sends one (its network namespace)` });
    expect((await send([file])).msg).toMatch(new RegExp(`^${bad}the descriptor sent with the request is not a network namespace: .*a regular file`));
  });

  it("runs a request that brings the caller's namespace, and holds none of what came once answered", async () => {
    const before = { file: held(file), net: held(ownNet) };
    expect(await send(['/proc/self/ns/net'])).toMatchObject({ supportedVersions: expect.arrayContaining(['1.0.0']) });
    await send([file]);
    await send(['/proc/self/ns/net', '/proc/self/ns/net']);
    expect({ file: held(file), net: held(ownNet) }).toEqual(before);
  });

  it('answers a connection that ends before its request as such, and serves on', async () => {
    const socket = net.connect(socketPath);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const answer: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => answer.push(chunk));
    socket.end();
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const whole = Buffer.concat(answer);
    const stdout = JSON.parse(whole.subarray(16, 16 + whole.readUInt32BE(8)).toString()) as { msg: string };
    expect(stdout.msg).toBe('bad request to the resident daemon: the connection ended before the request came');
    expect(await send(['/proc/self/ns/net'])).toMatchObject({ supportedVersions: expect.arrayContaining(['1.0.0']) });
  });
});

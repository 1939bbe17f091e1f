// The resident daemon never answers the shim more stdout than the shim holds
// (MAX_STDOUT, its fixed buffer): a plugin's output one byte over it is
// answered as an error naming the limit instead, and one exactly at it is
// passed on whole. The real shim and serveResident, on a socket in a
// temporary directory; the output is an error object whose details the test
// sizes to the byte.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CniCode, CniError, serveResident, type ResidentServer } from '../../dist/cni/index.js';
import { MAX_STDOUT } from '../../dist/cni/daemon/protocol.js';
import { SHIM } from '../helpers/cni-shim.mjs';

const VERSION = '1.0.0';
const CONFIG = Buffer.from(JSON.stringify({ cniVersion: VERSION, name: 'limit', type: 'limit' }));

/** The plugin's error, its printed object (with its newline) exactly `bytes` long. */
function errorPrinting(bytes: number): CniError {
  const printed = (details: string) => Buffer.byteLength(`${JSON.stringify(new CniError(CniCode.INTERNAL, 'big', details).toErrorObject(VERSION))}\n`);
  // One x measured, not none: empty details are left out of the object.
  const error = new CniError(CniCode.INTERNAL, 'big', 'x'.repeat(bytes - printed('x') + 1));
  expect(printed(error.details!)).toBe(bytes);
  return error;
}

/** A DEL through the shim; resolves with its exit code and stdout. */
function delViaShim(socketPath: string): Promise<{ code: number | null; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const env = { NETNS_CNI_SOCKET: socketPath, CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'ctr', CNI_IFNAME: 'eth0', CNI_PATH: '/nonexistent' };
    const child = spawn(SHIM, [], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stdin.end(CONFIG);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out) }));
  });
}

describe("the resident daemon's answer", () => {
  let dir: string;
  let server: ResidentServer | undefined;
  let thrown: CniError;
  const handlers = {
    add: () => ({ cniVersion: VERSION }),
    check: () => {},
    del: () => {
      throw thrown;
    },
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netns-answer-limit-'));
    server = await serveResident(handlers, { versions: [VERSION] }, { socketPath: join(dir, 'limit.sock'), handleSignals: false });
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("one byte over the shim's stdout limit is refused with the daemon's error, naming the limit", async () => {
    thrown = errorPrinting(MAX_STDOUT + 1);
    const run = await delViaShim(server!.socketPath);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.toString())).toMatchObject({ code: 999, msg: `the plugin printed ${MAX_STDOUT + 1} bytes, more than the shim passes on (${MAX_STDOUT})` });
  });

  it("exactly the shim's stdout limit is passed on whole", async () => {
    thrown = errorPrinting(MAX_STDOUT);
    const run = await delViaShim(server!.socketPath);
    expect(run.code).toBe(1);
    expect(run.stdout.length).toBe(MAX_STDOUT);
    expect(JSON.parse(run.stdout.toString())).toMatchObject({ code: CniCode.INTERNAL, msg: 'big' });
  });
});

// Errors from the I/O methods are NetnsErrors: Node's socket errors are
// wrapped with their code kept, Node's error as the cause, and the namespace
// named in the message.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS, NetnsError } from '../../dist/index.js';
import { nodeSpawnError } from '../helpers/missing-command.js';
import { privileged } from '../helpers/privileges.js';
import { scratchNamespaces } from '../helpers/scratch-namespaces.js';

const refusal = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => null, (error: unknown) => error);

describe.skipIf(!privileged)('I/O errors are NetnsErrors', () => {
  const scratch = scratchNamespaces('apierr-');
  let ns: NetNS;

  beforeAll(async () => {
    ns = await scratch.create();
    await ns.execFile('ip', ['link', 'set', 'lo', 'up']);
  });

  afterAll(() => scratch.removeAll());

  it('connect to a closed port rejects ECONNREFUSED, with Node error as the cause', async () => {
    const error = await refusal(ns.connect({ host: '127.0.0.1', port: 1 }));
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port: 1 });
    const { cause, message } = error as NetnsError;
    expect(cause).toBeInstanceOf(Error);
    expect(cause).not.toBeInstanceOf(NetnsError);
    expect(cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(message).toContain(ns.path);
  });

  it('an aborted execFile rejects with an AbortError (ABORT_ERR), the signal\'s reason as cause, as withNetNS does', async () => {
    const reason = new Error('enough');
    const controller = new AbortController();
    const pending = refusal(ns.execFile('sleep', ['30'], { signal: controller.signal }));
    controller.abort(reason);
    const error = await pending;
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
    expect((error as NetnsError).cause).toBe(reason);
    expect(await refusal(ns.execFile('true', [], { signal: AbortSignal.abort() }))).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
  });

  it('a unix connect to an abstract name nobody listens on rejects ECONNREFUSED as a NetnsError', async () => {
    const error = await refusal(ns.connect({ path: '\0apierr-nobody-listens' }));
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('listen on an address in use rejects EADDRINUSE as a NetnsError naming the namespace', async () => {
    const first = await ns.listen(net.createServer(), { host: '127.0.0.1' });
    try {
      const { port } = first.address() as net.AddressInfo;
      const error = await refusal(ns.listen(net.createServer(), { host: '127.0.0.1', port }));
      expect(error).toBeInstanceOf(NetnsError);
      expect(error).toMatchObject({ code: 'EADDRINUSE', address: '127.0.0.1', port });
      expect((error as Error).message).toContain(ns.path);
    } finally {
      first.close();
    }
  });

  it('createSocket on a port in use rejects EADDRINUSE as a NetnsError', async () => {
    const first = await ns.createSocket('udp4', { address: '127.0.0.1' });
    try {
      const { port } = first.address();
      const error = await refusal(ns.createSocket('udp4', { address: '127.0.0.1', port }));
      expect(error).toBeInstanceOf(NetnsError);
      expect(error).toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      first.close();
    }
  });

  it('a command that cannot be found is a NetnsError on the child, coded as Node codes it (ENOENT)', async () => {
    const child = ns.spawn('apierr-no-such-command');
    const error = await new Promise((resolve) => child.once('error', resolve));
    expect(error).toBeInstanceOf(NetnsError);
    expect(error).toMatchObject({ code: nodeSpawnError('apierr-no-such-command').code });
  });
});

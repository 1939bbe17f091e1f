// The resident daemon's per-attachment gate (src/cni/daemon/gate.ts), with
// fake calls that settle when the test says: calls of one attachment run one
// at a time in arrival order, a DEL aborts the ADDs before it and runs only
// once they have settled, other attachments never wait, and the key says
// which calls are of one attachment.
import { describe, expect, it } from 'vitest';
import { AttachmentGate, attachmentOf } from '../../dist/cni/daemon/gate.js';

/** A call the test finishes: `started` when the gate ran it, `finish()` settles it. */
function fakeCall(log: string[], name: string) {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const run = () => {
    log.push(`start ${name}`);
    markStarted();
    return new Promise<string>((resolve) => (finish = () => resolve(name))).finally(() => log.push(`end ${name}`));
  };
  return { run, started, finish: () => finish() };
}

const key = (container: string) => attachmentOf({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: container, CNI_IFNAME: 'eth0' }, Buffer.from('{"name":"net"}'));

describe('the attachment gate', () => {
  it('runs the calls of one attachment one after another, in arrival order', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [check1, check2] = [fakeCall(log, 'check1'), fakeCall(log, 'check2')];
    const first = gate.run(key('c1'), 'CHECK', new AbortController(), check1.run);
    const second = gate.run(key('c1'), 'CHECK', new AbortController(), check2.run);
    await check1.started;
    expect(log).toEqual(['start check1']);
    check1.finish();
    await check2.started;
    check2.finish();
    expect([await first, await second]).toEqual(['check1', 'check2']);
    expect(log).toEqual(['start check1', 'end check1', 'start check2', 'end check2']);
  });

  it('a DEL aborts the running ADD and the one waiting, and runs only after both settled', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [add1, add2, del] = [fakeCall(log, 'add1'), fakeCall(log, 'add2'), fakeCall(log, 'del')];
    const [c1, c2, c3] = [new AbortController(), new AbortController(), new AbortController()];
    const adds = [gate.run(key('c1'), 'ADD', c1, add1.run), gate.run(key('c1'), 'ADD', c2, add2.run)];
    await add1.started;
    const deleted = gate.run(key('c1'), 'DEL', c3, del.run);
    expect([c1.signal.aborted, c2.signal.aborted, c3.signal.aborted]).toEqual([true, true, false]);
    expect(c1.signal.reason).toMatchObject({ code: 999, message: expect.stringContaining('a DEL of the same attachment') });
    add1.finish(); // its rollback done
    await add2.started; // a real add2 would see its signal aborted and fail at once
    expect(log).toEqual(['start add1', 'end add1', 'start add2']);
    add2.finish();
    await del.started;
    del.finish();
    expect(await Promise.all([...adds, deleted])).toEqual(['add1', 'add2', 'del']);
  });

  it('an ADD after the DEL is not aborted by it, and runs after it', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [del, add] = [fakeCall(log, 'del'), fakeCall(log, 'add')];
    const addController = new AbortController();
    const deleted = gate.run(key('c1'), 'DEL', new AbortController(), del.run);
    const added = gate.run(key('c1'), 'ADD', addController, add.run);
    await del.started;
    del.finish();
    await add.started;
    add.finish();
    await Promise.all([deleted, added]);
    expect(addController.signal.aborted).toBe(false);
    expect(log).toEqual(['start del', 'end del', 'start add', 'end add']);
  });

  it('calls of other attachments, and calls of none, never wait', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [a, b, none] = [fakeCall(log, 'a'), fakeCall(log, 'b'), fakeCall(log, 'none')];
    const controller = new AbortController();
    const calls = [gate.run(key('c1'), 'ADD', controller, a.run), gate.run(key('c2'), 'DEL', new AbortController(), b.run), gate.run(undefined, 'ADD', new AbortController(), none.run)];
    await Promise.all([a.started, b.started, none.started]);
    expect(controller.signal.aborted).toBe(false);
    for (const call of [a, b, none]) call.finish();
    await Promise.all(calls);
  });

  it('a CHECK or a DEL is never aborted by the DEL after it, nor does a CHECK abort the ADD before it', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [add, check, del1, del2] = [fakeCall(log, 'add'), fakeCall(log, 'check'), fakeCall(log, 'del1'), fakeCall(log, 'del2')];
    const controllers = [new AbortController(), new AbortController(), new AbortController(), new AbortController()];
    const calls = [gate.run(key('c1'), 'ADD', controllers[0]!, add.run), gate.run(key('c1'), 'CHECK', controllers[1]!, check.run)];
    await add.started;
    expect(controllers[0]!.signal.aborted).toBe(false); // the CHECK came, and the ADD runs on
    calls.push(gate.run(key('c1'), 'DEL', controllers[2]!, del1.run), gate.run(key('c1'), 'DEL', controllers[3]!, del2.run));
    expect(controllers.map((c) => c.signal.aborted)).toEqual([true, false, false, false]);
    for (const call of [add, check, del1, del2]) {
      await call.started;
      call.finish();
    }
    await Promise.all(calls);
  });

  it('holds a lane only while its attachment has calls queued or running', async () => {
    const gate = new AttachmentGate();
    const log: string[] = [];
    const [a1, a2, b] = [fakeCall(log, 'a1'), fakeCall(log, 'a2'), fakeCall(log, 'b')];
    const calls = [gate.run(key('c1'), 'ADD', new AbortController(), a1.run), gate.run(key('c1'), 'CHECK', new AbortController(), a2.run), gate.run(key('c2'), 'ADD', new AbortController(), b.run)];
    gate.run(undefined, 'VERSION', new AbortController(), async () => {});
    expect(gate.busy).toBe(2);
    await a1.started;
    a1.finish();
    await a2.started; // c1's first call is done, its second runs
    expect(gate.busy).toBe(2);
    a2.finish();
    await calls[1];
    expect(gate.busy).toBe(1);
    await b.started;
    b.finish();
    await Promise.all(calls);
    expect(gate.busy).toBe(0);
    await gate.run(key('c1'), 'DEL', new AbortController(), () => Promise.reject(new Error('boom'))).catch(() => {});
    expect(gate.busy).toBe(0); // a failed call's lane goes too
  });

  it('a call that rejects does not stop the next one of its attachment', async () => {
    const gate = new AttachmentGate();
    const failing = gate.run(key('c1'), 'ADD', new AbortController(), () => Promise.reject(new Error('boom')));
    const next = gate.run(key('c1'), 'DEL', new AbortController(), async () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('ran');
  });

  it('keys an attachment by network name, container and interface; VERSION, GC, STATUS and unreadable configurations by none', () => {
    const env = (command: string, container = 'c1', ifname = 'eth0') => ({ CNI_COMMAND: command, CNI_CONTAINERID: container, CNI_IFNAME: ifname });
    const conf = (name: string) => Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name }));
    expect(attachmentOf(env('DEL'), conf('n'))).toBe(attachmentOf(env('ADD'), conf('n')));
    expect(attachmentOf(env('CHECK'), conf('n'))).toBe(attachmentOf(env('ADD'), conf('n')));
    const others = [attachmentOf(env('ADD'), conf('m')), attachmentOf(env('ADD', 'c2'), conf('n')), attachmentOf(env('ADD', 'c1', 'eth1'), conf('n'))];
    expect(new Set([attachmentOf(env('ADD'), conf('n')), ...others]).size).toBe(4);
    // No separator a name could forge: ("a", "b-c") is not ("a-b", "c").
    expect(attachmentOf(env('ADD', 'b-c'), conf('a'))).not.toBe(attachmentOf(env('ADD', 'c'), conf('a-b')));
    for (const command of ['VERSION', 'GC', 'STATUS']) expect(attachmentOf(env(command), conf('n'))).toBeUndefined();
    expect(attachmentOf(env('ADD'), Buffer.from('{"name":'))).toBeUndefined();
    expect(attachmentOf(env('ADD'), Buffer.from('null'))).toBeUndefined();
    expect(attachmentOf(env('ADD'), Buffer.from('{"name":7}'))).toBeUndefined();
  });
});

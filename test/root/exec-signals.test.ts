// NetNS.spawn's { parentDeathSignal }: the command does not outlive the
// process that spawned it, even one that is SIGKILLed.
import { constants } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { execHelperPath } from '../../dist/core/native.js';
import { fixture, start } from '../helpers/exec-cli.js';
import { distUrl } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

describe.skipIf(!privileged)('NetNS.spawn { parentDeathSignal }', () => {
  const name = `nsexec-${process.pid}-library`;

  beforeAll(async () => {
    (await NetNS.create(name)).close();
  });

  afterAll(async () => {
    await NetNS.delete(name).catch(() => {});
  });

  it('sends the signal to the command when the Node process that spawned it is SIGKILLed', async () => {
    const script = `
      import { NetNS } from ${JSON.stringify(distUrl('index.js'))};
      const ns = NetNS.open(${JSON.stringify(name)});
      ns.spawn(process.execPath, ${JSON.stringify([fixture('signal-recorder.mjs'), 'SIGTERM'])}, { stdio: 'inherit', parentDeathSignal: 'SIGTERM' });
    `;
    const parent = start([process.execPath, '--input-type=module', '-e', script]);
    expect(await parent.stdout.next()).toMatch(/^ready \d+$/); // the command's, on the stdout it inherited
    parent.child.kill('SIGKILL');
    expect(await parent.stdout.next()).toBe('SIGTERM');
    parent.child.stdin!.end(); // the command's stdin too: it exits
    expect(await parent.stdout.rest()).toEqual([expect.stringMatching(/^ready/), 'SIGTERM']);
  });

  it('the exec helper dies of the signal at once when its parent died before it could ask for one', async () => {
    // as if reparented: the parent pid it is given is not its parent's
    const argv = [execHelperPath(), '-', String(constants.signals.SIGTERM), String(process.ppid), 'sh', '-c', 'echo ran'];
    const helper = start(argv, { stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'pipe'] });
    expect(await helper.exit).toEqual([null, 'SIGTERM']);
    expect(await helper.stdout.rest()).toEqual([]);
  });
});

// forwardSignals' undo, which the CLI relies on when the command could not
// start and it goes on to report why: every listener it added is gone, and
// SIGPIPE and SIGXFSZ still cannot kill the process, as Node had them (a
// write to a closed pipe is an EPIPE error). Checked in a process of its own,
// whose signal dispositions nobody else touches.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

describe('forwardSignals', () => {
  it('undoes what it did, leaving SIGPIPE and SIGXFSZ unable to kill', async () => {
    const out = await runNodeScript(`
      import { spawn } from 'node:child_process';
      import { readFileSync } from 'node:fs';
      import { constants } from 'node:os';
      const { forwardSignals } = await import(${JSON.stringify(distUrl('cli/signal-forwarding.js'))});
      const listened = () => Object.keys(constants.signals).filter((name) => process.listenerCount(name) > 0);
      const mask = (field) => BigInt('0x' + readFileSync('/proc/self/status', 'utf8').match(new RegExp(field + ':\\\\s*(\\\\w+)'))[1]);
      const harmless = (signal) => ((mask('SigIgn') | mask('SigCgt')) >> BigInt(constants.signals[signal] - 1)) & 1n;
      const child = spawn('sleep', ['10'], { stdio: 'ignore' });
      const before = listened();
      forwardSignals(child)();
      child.kill();
      console.log(JSON.stringify({ before, after: listened(), pipe: Number(harmless('SIGPIPE')), xfsz: Number(harmless('SIGXFSZ')) }));
    `);
    expect(out.stderr).toBe('');
    // what stays is the stand-in for Node's ignore
    expect(JSON.parse(out.stdout)).toEqual({ before: [], after: ['SIGPIPE', 'SIGXFSZ'], pipe: 1, xfsz: 1 });
  });
});

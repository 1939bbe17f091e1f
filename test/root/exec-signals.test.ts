// `netns exec` as a transparent wrapper (issue 15): the command gets every
// signal sent to the CLI exactly once, stops and resumes with it, and the CLI
// ends as the command ended; a SIGKILLed CLI takes the command with it. And
// the library option under it: { parentDeathSignal } on NetNS.spawn.
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetNS } from '../../dist/index.js';
import { execHelperPath } from '../../dist/core/native.js';
import { execArgv, fixture, Lines, recorder, start, watchExit } from '../helpers/exec-cli.js';
import { distUrl } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';
import { parentOf, untilState } from '../helpers/process-state.js';

/** The signals issue 15 names; each gets a run of its own. */
const NAMED: NodeJS.Signals[] = ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGTERM', 'SIGWINCH', 'SIGALRM'];
const STOPS: NodeJS.Signals[] = ['SIGTSTP', 'SIGTTIN', 'SIGTTOU'];
/** Uncatchable, the CLI's own (SIGCHLD), or raised by a fault in the CLI itself. */
const NOT_FORWARDED = new Set(['SIGKILL', 'SIGSTOP', 'SIGCHLD', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGTRAP', 'SIGSYS']);

/** Every other signal the CLI can catch, one name per number (SIGIOT is SIGABRT, SIGPOLL is SIGIO). */
function otherCatchable(): NodeJS.Signals[] {
  const byNumber = new Map<number, NodeJS.Signals>();
  for (const [name, number] of Object.entries(constants.signals) as [NodeJS.Signals, number][]) {
    if (!NOT_FORWARDED.has(name) && !STOPS.includes(name) && !NAMED.includes(name) && !byNumber.has(number)) byNumber.set(number, name);
  }
  return [...byNumber.values()];
}

describe.skipIf(!privileged)('netns exec passes signals on and ends as the command ended', () => {
  const name = `nsexec-${process.pid}-signals`;

  beforeAll(async () => {
    (await NetNS.create(name)).close();
  });

  afterAll(async () => {
    await NetNS.delete(name).catch(() => {});
  });

  /** The CLI running the recorder; resolves once the recorder listens. */
  async function execRecorder(signals: string[]) {
    const cli = start(execArgv(name, recorder(signals)));
    expect(await cli.stdout.next()).toMatch(/^ready \d+$/);
    return cli;
  }

  it.each(NAMED)('passes %s on to the command exactly once, and exits with its status', async (signal) => {
    const cli = await execRecorder([signal]);
    cli.child.kill(signal);
    expect(await cli.stdout.next()).toBe(signal);
    cli.child.stdin!.end();
    expect(await cli.exit).toEqual([7, null]);
    expect(await cli.stdout.rest()).toEqual([expect.stringMatching(/^ready/), signal]);
  });

  it('passes on every other catchable signal (SIGPIPE, SIGCONT, SIGABRT, SIGPROF...), one at a time in one run', async () => {
    const signals = otherCatchable();
    expect(signals).toEqual(expect.arrayContaining(['SIGPIPE', 'SIGCONT', 'SIGABRT', 'SIGXFSZ', 'SIGURG', 'SIGPROF']));
    const cli = await execRecorder(signals);
    for (const signal of signals) {
      cli.child.kill(signal);
      expect(await cli.stdout.next()).toBe(signal);
    }
    cli.child.stdin!.end();
    expect(await cli.exit).toEqual([7, null]);
    expect((await cli.stdout.rest()).slice(1)).toEqual(signals);
  });

  // With no core dumps (prlimit --core=0), as most systems have them.
  it.each(['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGPIPE', 'SIGQUIT', 'SIGKILL'])('dies of %s when the command does, as a shell would see with ip', async (signal) => {
    const cli = start(execArgv(name, ['sh', '-c', `kill -s ${signal.slice(3)} $$`], ['prlimit', '--core=0']));
    expect(await cli.exit).toEqual([null, signal]);
  });

  it('exits 128+N instead of dumping a core of its own when core dumps are on', async () => {
    const command = ['sh', '-c', 'ulimit -c 0; kill -s QUIT $$']; // the command itself leaves no core either
    const cli = start(execArgv(name, command, ['prlimit', '--core=unlimited']));
    expect(await cli.exit).toEqual([128 + constants.signals.SIGQUIT, null]);
  });

  it('exits 128+N when it survives the signal: as PID 1 of a PID namespace, which the kernel spares', async () => {
    const cli = start(execArgv(name, ['sh', '-c', 'kill -s TERM $$'], ['unshare', '--pid', '--fork', '--mount-proc']));
    expect(await cli.exit).toEqual([128 + constants.signals.SIGTERM, null]);
  });

  it('takes the command with it when SIGKILLed', async () => {
    const cli = start(execArgv(name, ['sh', '-c', 'echo $$; exec sleep 1000']));
    const pid = Number(await cli.stdout.next());
    try {
      const { exited } = await watchExit(pid);
      cli.child.kill('SIGKILL');
      await exited;
    } finally {
      try {
        process.kill(pid, 'SIGKILL'); // only if the command outlived the CLI (the bug)
      } catch {
        // gone, as it should be
      }
    }
  });

  it.each(STOPS)('stops with the command on %s as a shell sees it, and resumes both on SIGCONT', async (signal) => {
    const job = start(execArgv(name, recorder([signal, 'SIGCONT']), ['perl', fixture('job-shell.pl')]), { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const report = new Lines(job.child.stdio[3] as Readable);
    const cliPid = Number((await report.next()).replace('job ', ''));
    const commandPid = Number((await job.stdout.next()).replace('ready ', ''));
    process.kill(cliPid, signal);
    expect(await job.stdout.next()).toBe(signal);
    expect(await report.next()).toBe(`stopped ${constants.signals[signal]}`);
    await untilState(commandPid, 'T'); // it stops itself after printing
    process.kill(cliPid, 'SIGCONT');
    expect(await report.next()).toBe('continued');
    expect(await job.stdout.next()).toBe('SIGCONT');
    job.child.stdin!.end();
    expect(await report.next()).toBe('exited 7');
    expect(await job.stdout.rest()).toEqual([expect.stringMatching(/^ready/), signal, 'SIGCONT']);
    await job.exit;
  });

  it('gives ^C on a terminal to the command once: the terminal signals the CLI and the command alike', async () => {
    const command = execArgv(name, recorder(['SIGINT', 'SIGUSR2'])).map((word) => `'${word}'`);
    // script(1) runs the CLI as the session leader of a new terminal, in its foreground process group
    const tty = start(['script', '--quiet', '--return', '--command', `exec ${command.join(' ')}`, '/dev/null'], {
      env: { ...process.env, SHELL: '/bin/sh' },
    });
    const cliPid = parentOf(Number((await tty.stdout.next()).replace('ready ', '')));
    tty.child.stdin!.write('\x03'); // ^C
    expect(await tty.stdout.next()).toMatch(/SIGINT$/); // after the terminal's echo of ^C
    // The CLI handles its signals in order: a second SIGINT, forwarded, would come before this
    process.kill(cliPid, 'SIGUSR2');
    expect(await tty.stdout.next()).toBe('SIGUSR2');
    tty.child.stdin!.write('\x04'); // ^D: the recorder's stdin ends
    expect(await tty.exit).toEqual([7, null]);
    expect((await tty.stdout.rest()).join('\n').match(/SIG[A-Z0-9]+/g)).toEqual(['SIGINT', 'SIGUSR2']);
  });
});

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
      ns.spawn(process.execPath, ${JSON.stringify([fixture('signal-recorder.mjs'), 'SIGTERM'])}, { stdio: [3, 'inherit', 'inherit'], parentDeathSignal: 'SIGTERM' });
    `;
    // The command's stdin is the parent's fd 3, not its stdin: Node destroys a child's stdin
    // when the child exits, and the command, seeing that end, could exit before its SIGTERM line.
    const parent = start([process.execPath, '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const commandStdin = parent.child.stdio[3] as Writable;
    expect(await parent.stdout.next()).toMatch(/^ready \d+$/); // the command's, on the stdout it inherited
    parent.child.kill('SIGKILL');
    expect(await parent.stdout.next()).toBe('SIGTERM');
    commandStdin.end(); // the command exits when its stdin ends
    // Maybe more than once: the kernel signals again each time it hands the command to another
    // thread of the dying parent (1 to 3 times in 48 runs under load)
    const [, ...signals] = await parent.stdout.rest();
    expect(new Set(signals)).toEqual(new Set(['SIGTERM']));
  });

  it('the exec helper dies of the signal at once when its parent died before it could ask for one', async () => {
    // as if reparented: the parent pid it is given is not its parent's
    const argv = [execHelperPath(), '-', '', '0', String(constants.signals.SIGTERM), String(process.ppid), 'sh', '-c', 'echo ran'];
    const helper = start(argv, { stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'pipe'] });
    expect(await helper.exit).toEqual([null, 'SIGTERM']);
    expect(await helper.stdout.rest()).toEqual([]);
  });
});

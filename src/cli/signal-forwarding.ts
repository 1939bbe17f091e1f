// `netns exec` as a transparent wrapper. `ip netns exec` execs the command in
// its own process; Node cannot, so the command is the CLI's child, and the CLI
// passes on the signals meant for it, stops when it stops and ends as it
// ended. The reasons for each rule are in docs/exec.md.
import type { ChildProcess } from 'node:child_process';
import { fs, os } from '../core/builtins.js';
import { procStatFields } from '../core/proc-stat.js';

// SIGKILL and SIGSTOP cannot be caught; SIGCHLD is about the CLI's own child.
// The kernel raises the rest in the thread that faulted: a listener would
// return to the faulting instruction and fault again, for ever.
const NOT_FORWARDED = new Set(['SIGKILL', 'SIGSTOP', 'SIGCHLD', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGTRAP', 'SIGSYS']);
const STOPS = new Set(['SIGTSTP', 'SIGTTIN', 'SIGTTOU']);
/** What a terminal sends to its whole foreground process group: ^C, ^\, ^Z and a resize. */
const FROM_TERMINAL = new Set(['SIGINT', 'SIGQUIT', 'SIGTSTP', 'SIGWINCH']);
/** Node ignores these from start-up, so that a write to a closed pipe is an EPIPE error rather than death. */
const IGNORED_BY_NODE = ['SIGPIPE', 'SIGXFSZ'] as const;
const DUMPS_CORE = new Set(['SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGXCPU', 'SIGXFSZ', 'SIGSYS']);

const ignore = (): void => {};

/** One name per number (SIGIOT is SIGABRT, SIGPOLL is SIGIO): a listener for each would forward twice. */
function forwardedSignals(): NodeJS.Signals[] {
  const byNumber = new Map<number, NodeJS.Signals>();
  for (const [name, number] of Object.entries(os().constants.signals)) {
    if (!NOT_FORWARDED.has(name) && !byNumber.has(number)) byNumber.set(number, name as NodeJS.Signals);
  }
  return [...byNumber.values()];
}

interface ProcessGroups {
  pgrp: number;
  /** The foreground process group of the process's terminal; -1 without one. */
  tpgid: number;
}

/** A process's groups; undefined without /proc to judge by. */
function processGroups(pid: number | 'self'): ProcessGroups | undefined {
  const fields = procStatFields(pid);
  return fields === undefined ? undefined : { pgrp: Number(fields[2]), tpgid: Number(fields[5]) };
}

// A terminal signals its whole foreground process group: when the CLI and the
// command are both in it, the command has the signal already, and forwarding
// would give it twice. Without /proc to tell, twice is better than never.
function terminalSentItToBoth(child: ChildProcess): boolean {
  const self = processGroups('self');
  const command = processGroups(child.pid!);
  return self !== undefined && command !== undefined && self.tpgid === self.pgrp && command.pgrp === self.pgrp;
}

// Stops the CLI by the same signal at its default action, so the shell sees the
// stop the command made, and the kernel applies the same rule as to the command
// (a stop in an orphaned process group, which no one could resume, is
// discarded). Removing the last listener is what restores the default action.
// Returns once the CLI is resumed.
function stopLikeChild(signal: NodeJS.Signals, listener: () => void): void {
  process.removeListener(signal, listener);
  process.kill(process.pid, signal);
  process.on(signal, listener);
}

/**
 * Passes every signal the CLI can catch on to `child`, except those a fault
 * raises and SIGCHLD; follows it into job-control stops. Must be the only
 * listener for those signals. Returns the undo.
 */
export function forwardSignals(child: ChildProcess): () => void {
  const listeners = new Map<NodeJS.Signals, () => void>();
  for (const signal of forwardedSignals()) {
    const listener = (): void => {
      if (child.exitCode !== null || child.signalCode !== null) return; // reaped: its pid may be another's now
      if (!(FROM_TERMINAL.has(signal) && terminalSentItToBoth(child))) child.kill(signal);
      if (STOPS.has(signal)) stopLikeChild(signal, listener);
    };
    listeners.set(signal, listener);
    process.on(signal, listener);
  }
  return () => {
    for (const [signal, listener] of listeners) process.removeListener(signal, listener);
    // without a listener they would now be at SIG_DFL (libuv's reset), not ignored as Node had them
    for (const signal of IGNORED_BY_NODE) if (process.listenerCount(signal) === 0) process.on(signal, ignore);
  };
}

/** RLIMIT_CORE's soft limit as /proc shows it ('0', 'unlimited', a size); 'unknown' without /proc. */
function softCoreLimit(): string {
  try {
    return /^Max core file size\s+(\S+)/m.exec(fs().readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

// Sets the default action first: Node ignores SIGPIPE, starts its inspector on
// SIGUSR1, and a listener may be left; libuv restores the default when the last
// listener goes. Returns only if the process survived (as PID 1 of a PID
// namespace, which the kernel spares).
function dieOf(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  if (signal !== 'SIGKILL') process.on(signal, ignore).removeListener(signal, ignore);
  process.kill(process.pid, signal);
}

/**
 * Ends the CLI as the command ended: with its exit status, or killed by the
 * same signal so a shell sees WIFSIGNALED as with `ip netns exec`. Falls back to
 * 128 + the signal's number when the CLI survives it, and when dying would dump
 * a core of the CLI beside the command's (as timeout(1) does).
 */
export function exitLikeChild(code: number | null, signal: NodeJS.Signals | null): never {
  if (signal === null) process.exit(code ?? 1);
  if (!DUMPS_CORE.has(signal) || softCoreLimit() === '0') dieOf(signal);
  process.exit(128 + os().constants.signals[signal]);
}

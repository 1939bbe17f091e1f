// spawnSandbox: a command in a rootless sandbox, as a ChildProcess. Node
// spawns the sandbox helper (native/sandbox_helper.c), a fresh
// single-threaded process: a multi-threaded one such as Node itself cannot
// unshare a user namespace. The helper reports a failed step on fd 3.
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { childProcess } from '../core/builtins.js';
import { ErrorCodes, netnsError, systemError } from '../core/errors.js';
import { sandboxHelperPath } from '../core/native.js';
import { own } from '../core/own.js';
import { checkCommand, checkSpawnOptions, deathSignalNumber, fromNodeSpawnError, reportThroughEvents, stdioTriple, type HelperReport } from '../io/helper-process.js';
import type { NetnsSpawnOptions } from '../io/spawn.js';
import { sandboxStepError } from './userns-settings.js';

const STATUS_FD = 3;

/** spawnSandbox()'s options: NetNS.spawn's, less `etc` (the sandbox has its own mounts). */
export type SandboxSpawnOptions = Omit<NetnsSpawnOptions, 'etc'>;

const WHERE = '(in a rootless sandbox)';

function checkOptions(options: unknown): asserts options is SandboxSpawnOptions {
  checkSpawnOptions(options);
  if (options.etc !== undefined) throw netnsError(ErrorCodes.INVALID_ARG, '{ etc } is a NetNS.spawn option: the sandbox has a mount namespace of its own');
}

function sandboxFailure({ stage, errno }: HelperReport, command: string, args: string[]): Error {
  const error = stage === 'exec' ? systemError(errno, `spawn ${command}`, command) : sandboxStepError(stage, errno);
  if (stage !== 'exec') error.message += ` (while making the sandbox for ${command})`;
  return Object.assign(error, { spawnargs: args });
}

/**
 * Starts `command` in a rootless sandbox; returns the ChildProcess at once.
 * The sandbox is a new user, mount and network namespace with the caller
 * mapped to root (uid and gid 0 inside, full capabilities there and none
 * outside), a /run and an /etc of their own (tmpfs showing the host's entries
 * except /run/netns, /run/netns-* and /etc/netns, which start empty), a sysfs of its network
 * namespace and lo up: `ip netns add`, NetNS.create, createTestNetwork,
 * createLab, nft and CNI plugins work inside without root, and nothing
 * changes outside. It ends with the last process in it. No root needed;
 * where the kernel or distribution forbids unprivileged user namespaces the
 * child emits 'error' with ERR_NETNS_USERNS_DENIED naming the setting. A
 * missing command is ENOENT, as with Node's spawn.
 */
export function spawnSandbox(command: string, args: string[] = [], options: SandboxSpawnOptions = {}): ChildProcess {
  checkCommand(command, args);
  checkOptions(options);
  const { stdio, parentDeathSignal, ...rest } = own(options);
  const triple = stdioTriple(stdio);
  // libuv forks on this thread and process.pid is its process: what the helper compares getppid() with
  const guard = [String(deathSignalNumber(parentDeathSignal)), String(process.pid)];
  let child: ChildProcess;
  try {
    child = childProcess().spawn(sandboxHelperPath(), [...guard, command, ...args], { ...rest, stdio: [...triple, 'pipe'] as StdioOptions });
  } catch (error) {
    throw fromNodeSpawnError(error, WHERE);
  }
  Object.assign(child, { spawnfile: command, spawnargs: [command, ...args] });
  reportThroughEvents(child, STATUS_FD, (report) => sandboxFailure(report, command, args), WHERE);
  return child;
}

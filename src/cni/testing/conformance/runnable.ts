// Whether the plugin file can be run at all, and the one error when it cannot.
// A runtime runs a plugin with execve; the runner's spawn, like Node's and
// the shell's, would run a file the kernel refuses (ENOEXEC) as a shell script
// instead, so that case is judged here, from the file's first bytes, before
// anything is made. EACCES and ENOENT (a missing #! interpreter) come from the
// spawn itself.
import { open, readdir } from 'node:fs/promises';
import { os } from '../../../core/builtins.js';
import { ErrorCodes, netnsError, type NetnsError } from '../../../core/errors.js';

// What each errno means for a plugin file that exists.
const HINTS: Record<string, string> = {
  EACCES: 'permission denied: not executable (no x bit, or on a noexec mount)',
  ENOENT: 'no such file or directory: its #! interpreter or ELF loader is missing',
  ENOEXEC: 'exec format error: neither an ELF program for this machine nor a #! script',
};

/** ERR_NETNS_CNI_PLUGIN_UNRUNNABLE for `plugin`, from the errno code the start failed with. */
export function cannotRun(plugin: string, code: string, cause?: unknown): NetnsError {
  const errno = (os().constants.errno as Record<string, number | undefined>)[code];
  const reason = HINTS[code] ?? (cause instanceof Error ? cause.message : 'it could not be started');
  return netnsError(ErrorCodes.CNI_PLUGIN_UNRUNNABLE, `cannot run ${plugin}: ${reason} (${code})`, {
    path: plugin,
    syscall: 'execve',
    ...(errno === undefined ? {} : { errno: -errno }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Formats binfmt_misc may add: with any registered, the first bytes cannot tell what the kernel runs. */
async function hasBinfmtHandlers(): Promise<boolean> {
  const entries = await readdir('/proc/sys/fs/binfmt_misc').catch(() => [] as string[]);
  return entries.some((entry) => entry !== 'register' && entry !== 'status');
}

// ELF e_machine values this kernel runs, by Node's arch: its own, and the 32-bit one it can run beside it.
const ELF_MACHINES: Partial<Record<NodeJS.Architecture, number[]>> = {
  x64: [62, 3],
  ia32: [3],
  arm64: [183, 40],
  arm: [40],
  riscv64: [243],
  ppc64: [21],
  s390x: [22],
  loong64: [258],
};

/** The ELF header's first 20 bytes hold the magic, class, byte order and e_machine. */
const HEAD_BYTES = 20;

async function firstBytes(plugin: string): Promise<Buffer> {
  const file = await open(plugin, 'r');
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** Whether the kernel would load this head natively: a #! script, or an ELF program for this machine (a wrong-arch download is the usual ENOEXEC). */
function isNativeFormat(head: Buffer): boolean {
  if (head.subarray(0, 2).toString('latin1') === '#!') return true;
  if (head.length < HEAD_BYTES || !head.subarray(0, 4).equals(Buffer.from('\x7fELF', 'latin1'))) return false;
  const machines = ELF_MACHINES[process.arch];
  const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
  return machines === undefined || machines.includes(machine);
}

/** Rejects with ENOEXEC when the kernel would refuse to exec `plugin` (no #!, not ELF, another machine's ELF); a file that cannot be read, with its errno. */
export async function assertExecFormat(plugin: string): Promise<void> {
  const head = await firstBytes(plugin).catch((error: NodeJS.ErrnoException) => {
    throw cannotRun(plugin, error.code ?? 'EIO', error);
  });
  if (!isNativeFormat(head) && !(await hasBinfmtHandlers())) throw cannotRun(plugin, 'ENOEXEC');
}

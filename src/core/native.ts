// Loads the compiled addon; NETNS_ADDON_PATH points at another build (e.g. the
// AddressSanitizer one made by `npm run build:asan`).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface NsIdentity {
  dev: number;
  ino: number;
}

export interface NativeBinding {
  openNetns(path: string): NsIdentity & { fd: number };
  openNetnsIdentity(path: string): NsIdentity;
  createNamespace(runDir: string, path: string): Promise<NsIdentity & { fd: number }>;
  deleteNamespace(path: string): Promise<void>;
  closeFd(fd: number): void;
  /** A close-on-exec fd holding an exclusive flock on `path` (created), or -1 while another holds it. */
  tryLockFile(path: string): number;
  pipe(): { read: number; write: number };
  threadNetns(): NsIdentity;
  becomeSwitchThread(): void;
  enter(fd: number): void;
  restore(): Error | null;
  dropEffectiveCapability(cap: number): void;
  ioSocket(nsFd: number, domain: number, type: number, protocol: number): Promise<number>;
  ioBind(nsFd: number, type: number, host: string, port: number, unix: boolean, backlog: number): Promise<number>;
  ioReadFile(nsFd: number, path: string): Promise<Buffer>;
  ioWriteFile(nsFd: number, path: string, data: string): Promise<void>;
  ioStats(): { threadsCreated: number; threadsDiscarded: number };
}

/** The exec helper built beside the addon (see native/exec_helper.c). */
export const execHelperPath = process.env.NETNS_EXEC_HELPER ?? `${packageRoot}build/Release/netns-exec`;


function load(): NativeBinding {
  const explicit = process.env.NETNS_ADDON_PATH;
  if (explicit) return require(explicit) as NativeBinding;
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
  return nodeGypBuild(packageRoot) as NativeBinding;
}

export const native: NativeBinding = load();

// Loads the compiled addon; NETNS_ADDON_PATH points at another build (e.g. the
// AddressSanitizer one made by `npm run build:asan`).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface NsIdentity {
  dev: number;
  ino: number;
}

export interface NativeBinding {
  openNetns(path: string): NsIdentity & { fd: number };
  closeFd(fd: number): void;
  fdIdentity(fd: number): NsIdentity;
  threadNetns(): NsIdentity;
  becomeSwitchThread(): void;
  enter(fd: number): void;
  restore(): Error | null;
  dropEffectiveCapability(cap: number): void;
}

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));

function load(): NativeBinding {
  const explicit = process.env.NETNS_ADDON_PATH;
  if (explicit) return require(explicit) as NativeBinding;
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
  return nodeGypBuild(packageRoot) as NativeBinding;
}

export const native: NativeBinding = load();

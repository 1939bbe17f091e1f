// netns's static shim installed as a CNI plugin binary, for the tests and the
// benchmarks alike (plain JavaScript so that bench/ runs it without a build).
// A runtime spawns it by the plugin's name and it hands the call to the
// resident daemon serving that name.
import { chmodSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shim as `npm run build` makes it. */
export const SHIM = fileURLToPath(new URL('../../build/Release/netns-cni-shim', import.meta.url));

/**
 * Copies the shim into `dir` as `name` (executable) and returns its path. The
 * name matters: the shim connects to /run/netns-cni/NAME.sock unless
 * NETNS_CNI_SOCKET names another socket.
 */
export function installShim(dir, name) {
  const path = join(dir, name);
  copyFileSync(SHIM, path);
  chmodSync(path, 0o755);
  return path;
}

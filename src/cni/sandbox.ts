// CNI_NETNS checked before a handler runs. Go's skel checks it only after
// ADD or DEL has done its work (so a result and then an error both reach
// stdout, and a plugin given its own namespace, e.g. a host PID's
// /proc/<pid>/ns/net, has already changed the host: plugins#714). Here ADD and
// CHECK need a real network namespace other than the plugin's own; DEL needs
// none, since it must clean up the host side whatever became of the container,
// but is refused the plugin's own namespace too.
import { callNative, ErrorCodes, NetnsError } from '../core/errors.js';
import { native, type NsIdentity } from '../core/native.js';
import { CniCode, CniError } from './errors.js';
import type { Environment } from './env.js';

/** Open failures that mean "no namespace there any more" (a runtime may leave the empty mount point behind). */
const GONE = new Set<string>(['ENOENT', 'ENOTDIR', ErrorCodes.NOT_NETNS]);

function invalidNetns(message: string, details = ''): CniError {
  return new CniError(CniCode.INVALID_NETNS, message, details);
}

/**
 * Whether the container's namespace is gone (DEL only: CNI_NETNS empty,
 * missing, or no longer a namespace); throws code 8 where the command cannot
 * go on. GC, STATUS and VERSION have no namespace: false. `host` names the
 * plugin's own namespace (CmdArgs.hostNs: a resident daemon's caller's).
 */
export async function checkNetns(env: Environment, host: () => NsIdentity): Promise<boolean> {
  const { command, netns } = env;
  if (command !== 'ADD' && command !== 'CHECK' && command !== 'DEL') return false;
  if (netns === '') return true; // only DEL gets here: the others require it
  // The addon loads on this first use: VERSION, GC and STATUS never need it.
  let identity: { dev: number; ino: number };
  try {
    identity = callNative(() => native().openNetnsIdentity(netns));
  } catch (error) {
    const code = error instanceof NetnsError ? error.code : '';
    if (command === 'DEL' && GONE.has(code)) return true;
    throw invalidNetns(`CNI_NETNS ${JSON.stringify(netns)} is not a usable network namespace`, error instanceof Error ? error.message : String(error));
  }
  const own = host();
  if (!env.netnsOverride && own.dev === identity.dev && own.ino === identity.ino) {
    throw invalidNetns(`CNI_NETNS ${JSON.stringify(netns)} is the plugin's own network namespace`, 'a runtime passes the container\'s; test harnesses set CNI_NETNS_OVERRIDE=1');
  }
  return false;
}

// The IPAM plugin named by the configuration's `ipam.type`, run as a delegate
// with the configuration's own bytes (SPEC §4): ADD for addresses, and the
// other commands forwarded, as the spec requires of a plugin that delegates.
// ADD, DEL and CHECK go again in an older version if the plugin refused the
// configuration's (ipam-version.ts); GC and STATUS exist only in 1.1.0.
import { ErrorCodes, kindOf, netnsError } from '../core/errors.js';
import { assertConfig, CniCode, CniError } from './errors.js';
import { delegate, delegateAdd, type ConfigBytes, type DelegateEnvironment } from './invoke.js';
import { withVersionFallback } from './ipam-version.js';
import type { NetConf, Result } from './types.js';
import { INTRODUCED } from './version.js';

/** What the IPAM calls need of a handler's CmdArgs: the parsed configuration, its bytes and the call's environment. */
export interface IpamInput {
  /** The parsed configuration (CmdArgs.config): `ipam.type` names the plugin. */
  config: NetConf;
  /** The configuration's bytes as received (CmdArgs.stdin): what the IPAM plugin reads on its stdin. */
  stdin: ConfigBytes;
  /** execDel: the attachment to release, when not this call's (GC releasing a stale one passes a copy of its args with these changed). */
  containerId?: string;
  /** execDel: the interface name of the attachment to release, with `containerId`. */
  ifname?: string;
  /** The call's environment (CmdArgs.env): the delegate's CNI_PATH and variables. Without one, process.env. */
  env?: DelegateEnvironment;
  /** The call's CmdArgs.signal: IPAM ADD is killed when it aborts (the releasing DEL never is). */
  signal?: AbortSignal;
}

/** `ipam.type` of the configuration; code 7 if it names no plugin. */
export function ipamType(config: NetConf): string {
  assertConfig(config, 'ipamType');
  const ipam = Object.hasOwn(config, 'ipam') ? config.ipam : undefined;
  const type = typeof ipam === 'object' && ipam !== null && Object.hasOwn(ipam, 'type') ? ipam.type : undefined;
  if (typeof type !== 'string' || type === '') throw new CniError(CniCode.INVALID_NETWORK_CONFIG, 'ipam.type is required: it names the IPAM plugin');
  return type;
}

/** The input object itself; its config is ipamType's to judge. A slip in the plugin's code, so not a CNI error. */
function checkInput(input: unknown, fn: string): asserts input is IpamInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${fn} takes { config, stdin, env? } (a handler's CmdArgs will do), got ${kindOf(input)}`);
  }
}

/** IPAM ADD: the addresses (and routes, DNS) the IPAM plugin allocated, in the current result shape. */
export async function execAdd(input: IpamInput): Promise<Result> {
  checkInput(input, 'execAdd');
  const plugin = ipamType(input.config);
  return withVersionFallback({ plugin, stdin: input.stdin, env: input.env, run: (stdin) => delegateAdd(plugin, stdin, input.env, input.signal) });
}

/** IPAM DEL: releases what ADD allocated for this CNI_CONTAINERID and CNI_IFNAME; a second DEL succeeds. */
export async function execDel(input: IpamInput): Promise<void> {
  checkInput(input, 'execDel');
  const { containerId, ifname } = input;
  const plugin = ipamType(input.config);
  const env = {
    ...(input.env ?? process.env),
    ...(typeof containerId === 'string' ? { CNI_CONTAINERID: containerId } : {}),
    ...(typeof ifname === 'string' ? { CNI_IFNAME: ifname } : {}),
  };
  return withVersionFallback({ plugin, stdin: input.stdin, env: input.env, run: (stdin) => delegate('DEL', plugin, stdin, env) });
}

/** IPAM CHECK (the spec asks a plugin's CHECK to run its delegate's and pass on its error). */
export async function execCheck(input: IpamInput): Promise<void> {
  checkInput(input, 'execCheck');
  const plugin = ipamType(input.config);
  return withVersionFallback({ plugin, stdin: input.stdin, env: input.env, run: (stdin) => delegate('CHECK', plugin, stdin, input.env), since: INTRODUCED.CHECK });
}

/** IPAM GC (MUST be forwarded): the configuration carries cni.dev/valid-attachments. */
export async function execGc(input: IpamInput): Promise<void> {
  checkInput(input, 'execGc');
  return delegate('GC', ipamType(input.config), input.stdin, input.env);
}

/** IPAM STATUS (MUST be forwarded when ADD depends on it). */
export async function execStatus(input: IpamInput): Promise<void> {
  checkInput(input, 'execStatus');
  return delegate('STATUS', ipamType(input.config), input.stdin, input.env);
}

/** IPAM DEL after a failed or abandoned ADD; its own failure goes to stderr, the ADD's is the one the runtime needs. */
async function release(input: IpamInput): Promise<void> {
  await execDel(input).catch((cleanup: unknown) => {
    process.stderr.write(`releasing the IPAM allocation after a failed ADD failed too: ${(cleanup as Error).message}\n`);
  });
}

/**
 * IPAM ADD, then `use(result)` (make the interface, set the addresses...);
 * if `use` fails, IPAM DEL releases the allocation before `use`'s error is
 * rethrown, so a failed ADD leaks no address.
 *
 * Nothing is released when IPAM ADD itself fails: host-local refuses a second
 * ADD for an attachment it already holds ("duplicate allocation is not
 * allowed"), and a DEL then would free the address of the live first ADD.
 * An ADD abandoned (input.signal aborted) is another matter: its IPAM ADD,
 * killed, may have allocated, the runtime counts the whole ADD as failed,
 * so the allocation is released; abandoned once IPAM answered, `use` is not run.
 */
export async function execAddThen<T>(input: IpamInput, use: (result: Result) => T | Promise<T>): Promise<T> {
  if (typeof use !== 'function') throw netnsError(ErrorCodes.INVALID_ARG, 'execAddThen needs a function to run with the IPAM result');
  let result: Result;
  try {
    result = await execAdd(input);
  } catch (error) {
    if (input.signal?.aborted) await release(input);
    throw error;
  }
  try {
    input.signal?.throwIfAborted();
    return await use(result);
  } catch (error) {
    await release(input);
    throw error;
  }
}

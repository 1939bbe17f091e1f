// Delegating to an IPAM plugin older than the configuration: a 1.1.0 conflist
// with Debian's host-local 1.1.1 (which speaks up to 1.0.0) is refused with
// code 1 before the plugin does anything. The configuration is then given
// again in the highest version the plugin reports (VERSION) that is not newer
// than its own, or the call fails naming both. The plugin is asked only after
// such a refusal, so the usual call costs no extra process; the result comes
// back by its own cniVersion (delegateAdd reads any) in the current shape.
import { CniCode, CniError } from './errors.js';
import { delegateVersions, type ConfigBytes, type DelegateEnvironment } from './invoke.js';
import { convertResult, parseResult } from './result.js';
import { isSpecVersion, versionAtLeast, versionOf } from './version.js';

/** Each call to `run` is one run of the plugin with those configuration bytes. */
export interface VersionFallback<T> {
  plugin: string;
  stdin: ConfigBytes;
  run: (stdin: ConfigBytes) => Promise<T>;
  /** The command's first version (CHECK: 0.4.0): an older one cannot carry it. */
  since?: string;
  /** The call's environment, for the VERSION question (its CNI_PATH); process.env by default. */
  env?: DelegateEnvironment;
}

/** `run(stdin)`; if the plugin refused its version (code 1), once more in the newest version it has that the configuration allows. */
export async function withVersionFallback<T>(call: VersionFallback<T>): Promise<T> {
  const { plugin, stdin, run, since = '0.1.0', env } = call;
  try {
    return await run(stdin);
  } catch (error) {
    if (!(error instanceof CniError) || error.code !== CniCode.INCOMPATIBLE_VERSION) throw error;
    const config = JSON.parse(stdin.toString()) as Record<string, unknown>; // the bytes pluginMain parsed as the configuration
    const wanted = versionOf(config);
    const supported = await delegateVersions(plugin, env);
    if (supported.includes(wanted)) throw error; // refused for another reason: nothing to negotiate
    const version = newestUpTo(supported, since, wanted);
    if (version === undefined) {
      throw new CniError(CniCode.INCOMPATIBLE_VERSION, `IPAM plugin ${plugin} cannot take this configuration: it is cniVersion ${wanted}, the plugin supports [${supported.join(', ')}], none from ${since} to ${wanted}`, `${error.message}${error.details ? `: ${error.details}` : ''}`);
    }
    return run(JSON.stringify(inVersion(config, version)));
  }
}

/** The newest spec version of `supported` within [since, upTo]. */
function newestUpTo(supported: readonly string[], since: string, upTo: string): string | undefined {
  return supported
    .filter((v) => isSpecVersion(v) && versionAtLeast(v, since) && versionAtLeast(upTo, v))
    .reduce<string | undefined>((best, v) => (best === undefined || versionAtLeast(v, best) ? v : best), undefined);
}

/** The configuration as `version` has it: its cniVersion, and a prevResult in that version's shape. */
function inVersion(config: Record<string, unknown>, version: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config, cniVersion: version };
  if (Object.hasOwn(config, 'prevResult')) out.prevResult = convertResult(parseResult(config.prevResult, versionOf(config), 'prevResult'), version);
  return out;
}

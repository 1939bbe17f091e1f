// Which spec version a configuration speaks, and whether this plugin may
// answer it. Matching is exact (a plugin declares every version it speaks);
// ordering is only for the commands a version introduced (CHECK, GC, STATUS).
import { CniCode, CniError } from './errors.js';
import { SPEC_VERSIONS } from './types.js';

/** The newest version this library speaks: what a result is built in before conversion. */
export const CURRENT_VERSION = '1.1.0';

/** The version of a parsed configuration or result: a missing or empty cniVersion means 0.1.0, as the spec's first version had none. */
export function versionOf(value: Record<string, unknown>): string {
  const version = Object.hasOwn(value, 'cniVersion') ? value.cniVersion : undefined;
  if (version === undefined || version === '') return '0.1.0';
  if (typeof version !== 'string') {
    throw new CniError(CniCode.DECODING_FAILURE, `cniVersion must be a string, got ${JSON.stringify(version)}`);
  }
  return version;
}

const VERSION_FORM = /^(\d+)\.(\d+)\.(\d+)$/;

/** Whether `text` has a version's form, X.Y.Z (whether or not a spec defines it). */
export function isVersionText(text: unknown): text is string {
  return typeof text === 'string' && VERSION_FORM.test(text);
}

function parts(version: string): [number, number, number] {
  const match = VERSION_FORM.exec(version);
  if (!match) throw new CniError(CniCode.DECODING_FAILURE, `cniVersion ${JSON.stringify(version)} is not of the form X.Y.Z`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether version `a` is `b` or later; a malformed version is a decoding failure (code 6). */
export function versionAtLeast(a: string, b: string): boolean {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!;
  return true;
}

/** Code 1 unless `version` is one the plugin declared, compared as exact strings. */
export function assertSupported(version: string, supported: readonly string[]): void {
  if (!supported.includes(version)) {
    const list = supported.map((v) => JSON.stringify(v)).join(', ');
    throw new CniError(CniCode.INCOMPATIBLE_VERSION, 'incompatible CNI versions', `config is ${JSON.stringify(version)}, plugin supports [${list}]`);
  }
}

/** Whether the spec defines `version` (a plugin may only declare these). */
export function isSpecVersion(version: unknown): version is (typeof SPEC_VERSIONS)[number] {
  return (SPEC_VERSIONS as readonly unknown[]).includes(version);
}

/** The version that introduced each command after 0.1.0: a configuration of an older version cannot ask for it. */
export const INTRODUCED = { CHECK: '0.4.0', GC: '1.1.0', STATUS: '1.1.0' } as const;

/** Whether results of `version` carry `ips[].version` (0.3.0 to 0.4.0; 1.0.0 dropped it), as Go's testutils.HasIPVersion. */
export function hasIpVersion(version: string): boolean {
  return versionAtLeast(version, '0.3.0') && !versionAtLeast(version, '1.0.0');
}

/** Whether `version` has CHECK (0.4.0 and later). */
export function hasCheck(version: string): boolean {
  return versionAtLeast(version, INTRODUCED.CHECK);
}

/** Whether `version` has STATUS (1.1.0 and later; GC came with it). */
export function hasStatus(version: string): boolean {
  return versionAtLeast(version, INTRODUCED.STATUS);
}

// The CNI error a plugin reports: a numeric code from the spec (SPEC §5) or
// the plugin's own (100 and up), printed on stdout as the spec's error object.
// Library misuse (a wrong argument to this API) is a NetnsError with
// ERR_NETNS_INVALID_ARG instead: that is a bug in the plugin, not a CNI answer.
import { ErrorCodes, NetnsError, netnsError } from '../core/errors.js';
import type { ErrorObject } from './types.js';

/** The spec's well-known codes, plus Go's 8 and 999 that runtimes already see from Go plugins. */
export const CniCode = {
  /** The configuration asks for a CNI version the plugin does not support. */
  INCOMPATIBLE_VERSION: 1,
  /** A configuration field the plugin does not support; the message names the key and its value. */
  UNSUPPORTED_FIELD: 2,
  /** The container is unknown or gone: the runtime need not clean up after it (no DEL). */
  UNKNOWN_CONTAINER: 3,
  /** A required CNI_* variable is missing or invalid; the message names which. */
  INVALID_ENVIRONMENT: 4,
  /** An I/O failure, such as reading the configuration from stdin. */
  IO_FAILURE: 5,
  /** Input that does not decode: configuration JSON, a version string. */
  DECODING_FAILURE: 6,
  /** A configuration that decodes but does not validate. */
  INVALID_NETWORK_CONFIG: 7,
  /** Not in the spec: Go's code for a CNI_NETNS that cannot be used. */
  INVALID_NETNS: 8,
  /** A transient condition: the runtime should retry later. */
  TRY_AGAIN_LATER: 11,
  /** STATUS: the plugin cannot serve ADD now. */
  PLUGIN_NOT_AVAILABLE: 50,
  /** STATUS: the plugin cannot serve ADD, and containers already on the network may have limited connectivity. */
  LIMITED_CONNECTIVITY: 51,
  /**
   * Not in the spec (the plugins' own range, 100 and up): what this package's
   * CHECK helpers found missing or different. The spec has no code for it and
   * Go's plugins say 999, which reads as the plugin's own fault.
   */
  CHECK_FAILED: 110,
  /** Not in the spec: Go's code for any other failure; a plain thrown Error becomes this. */
  INTERNAL: 999,
} as const;

/**
 * The error a plugin's handler throws to answer with a CNI error: pluginMain
 * prints it as the spec's error object (`code`, `msg`, `details`) and exits 1.
 * Pass a CniCode value, or a code of your own from 100 up. A code that is not
 * a non-negative integer throws ERR_NETNS_INVALID_ARG.
 *
 * It is the CNI protocol's error, by design not a NetnsError: its numeric
 * `code` is what the runtime reads, and a plugin chooses it. What this package
 * itself raises (misuse, system errors, a CHECK helper's finding) is a
 * NetnsError with a string code; toCniError turns one into the answer.
 */
export class CniError extends Error {
  /** 'CniError'. */
  override name = 'CniError';
  /** The CNI error code (a number, unlike NetnsError's string codes). */
  readonly code: number;
  /** The error object's `details`: more on the cause; '' for none (then left out of the object). */
  readonly details: string;

  constructor(code: number, message: string, details = '') {
    if (!Number.isSafeInteger(code) || code < 0) {
      throw netnsError(ErrorCodes.INVALID_ARG, `a CNI error code is a non-negative integer, got ${String(code)}`);
    }
    super(message);
    this.code = code;
    this.details = details;
  }

  /** The spec's error object; `cniVersion` is the configuration's, which Go leaves out and the spec asks for. */
  toErrorObject(cniVersion: string): ErrorObject {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** ERR_NETNS_INVALID_ARG unless `config` is a parsed configuration (an object): the API's functions read it. */
export function assertConfig(config: unknown, caller: string): asserts config is Record<string, unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw netnsError(ErrorCodes.INVALID_ARG, `${caller} takes a parsed configuration (an object)`);
  }
}

/**
 * A CniError as is; a CHECK helper's finding (ERR_NETNS_CNI_CHECK) is
 * CHECK_FAILED with its message; anything else thrown becomes 999 with its
 * message, as Go's skel does.
 */
export function toCniError(error: unknown): CniError {
  if (error instanceof CniError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof NetnsError && error.code === ErrorCodes.CNI_CHECK) return new CniError(CniCode.CHECK_FAILED, message);
  return new CniError(CniCode.INTERNAL, message);
}

// What a plugin's failure looks like to a test: the spec's error object it
// printed (code, msg, details, as a CniError) plus which plugin, which command,
// and what it wrote on stderr, which runtimes log but a test wants to show.
import { ErrorCodes, netnsError } from '../../core/errors.js';
import { CniError } from '../errors.js';
import type { CniCommand } from '../types.js';

/**
 * A plugin's failure as CniHarness and invokePlugin reject with it: the error
 * object the plugin printed (`code`, `message`, `details`, as a CniError)
 * plus which plugin, which command, and its stderr. It is the CNI protocol's
 * answer, by design not a NetnsError: `code` is the plugin's number. What the
 * harness itself refuses (misuse, the result cache's files) is a NetnsError.
 */
export class PluginError extends CniError {
  /** 'PluginError'. */
  override name = 'PluginError';
  /** The command that failed. */
  readonly command: CniCommand;
  /** The executable that failed. */
  readonly plugin: string;
  /** What the plugin wrote on stderr. */
  readonly stderr: string;

  constructor(failure: CniError, context: { command: CniCommand; plugin: string; stderr: string }) {
    // Checked before super() reads them: a missing failure would be a TypeError from inside.
    if (!(failure instanceof CniError) || typeof context !== 'object' || context === null) {
      throw netnsError(ErrorCodes.INVALID_ARG, 'new PluginError(failure, context) takes a CniError and { command, plugin, stderr }');
    }
    super(failure.code, failure.message, failure.details);
    this.command = context.command;
    this.plugin = context.plugin;
    this.stderr = context.stderr;
  }
}

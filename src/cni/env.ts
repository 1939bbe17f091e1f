// The CNI_* variables a runtime sets, read and checked per command. Which are
// required is the spec's list for each command (SPEC §3); Go's skel also
// requires CNI_PATH for ADD, DEL, CHECK and STATUS, which the spec leaves
// optional there, so this accepts what skel would refuse, never the reverse.
import { CniCode, CniError } from './errors.js';
import type { CniCommand } from './types.js';

export interface Environment {
  command: CniCommand;
  containerId: string;
  /** CNI_NETNS as given; '' when unset (allowed for DEL, GC, STATUS). */
  netns: string;
  ifname: string;
  /** CNI_ARGS as given; parseCniArgs reads it. */
  args: string;
  /** CNI_PATH's directories (splitPath). */
  path: string[];
  /** CNI_NETNS_OVERRIDE=1|true: CNI_NETNS may be the plugin's own namespace (test harnesses set it). */
  netnsOverride: boolean;
}

const COMMANDS: readonly CniCommand[] = ['ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'VERSION'];
const PER_ATTACHMENT = ['CNI_CONTAINERID', 'CNI_IFNAME'];
const REQUIRED: Record<CniCommand, readonly string[]> = {
  ADD: [...PER_ATTACHMENT, 'CNI_NETNS'],
  CHECK: [...PER_ATTACHMENT, 'CNI_NETNS'],
  DEL: PER_ATTACHMENT,
  GC: ['CNI_PATH'],
  STATUS: [],
  VERSION: [],
};

/** CNI_PATH's directories; an empty entry is dropped, since joined with a name it would search the working directory. */
export function splitPath(text: string): string[] {
  return text.split(':').filter((dir) => dir !== '');
}

/** The characters CNI allows in container IDs and network names. */
export const CNI_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

function invalid(message: string, details = ''): CniError {
  return new CniError(CniCode.INVALID_ENVIRONMENT, message, details);
}

/** Linux's rules for a link name (net/core/dev.c dev_valid_name): 1 to 15 bytes, not . or .., no / : or whitespace. */
function checkIfname(ifname: string): void {
  if (Buffer.byteLength(ifname) > 15) throw invalid('CNI_IFNAME is too long', `an interface name has at most 15 bytes, got ${JSON.stringify(ifname)}`);
  if (ifname === '.' || ifname === '..') throw invalid('CNI_IFNAME is . or ..');
  if (/[\s/:]/u.test(ifname)) throw invalid('CNI_IFNAME contains / or : or whitespace', JSON.stringify(ifname));
}

/**
 * Reads the environment for one invocation. Every missing required variable
 * is named in one code-4 error; then the container ID and interface name are
 * checked where they are required (code 4).
 */
export function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const value = (name: string): string => env[name] ?? '';
  const given = value('CNI_COMMAND');
  if (given !== '' && !(COMMANDS as readonly string[]).includes(given)) throw invalid(`unknown CNI_COMMAND: ${given}`);
  const command = given as CniCommand;
  const required = given === '' ? [] : REQUIRED[command];
  const missing = ['CNI_COMMAND', ...required].filter((name) => value(name) === '');
  if (missing.length > 0) throw invalid(`required environment variables [${missing.join(',')}] missing`);
  if (required.includes('CNI_CONTAINERID') && !CNI_NAME.test(value('CNI_CONTAINERID'))) {
    throw invalid('invalid characters in CNI_CONTAINERID', value('CNI_CONTAINERID'));
  }
  if (required.includes('CNI_IFNAME')) checkIfname(value('CNI_IFNAME'));
  const override = value('CNI_NETNS_OVERRIDE');
  return {
    command,
    containerId: value('CNI_CONTAINERID'),
    netns: value('CNI_NETNS'),
    ifname: value('CNI_IFNAME'),
    args: value('CNI_ARGS'),
    path: splitPath(value('CNI_PATH')),
    netnsOverride: override === '1' || override.toLowerCase() === 'true',
  };
}

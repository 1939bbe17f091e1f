// The CNI protocol as the spec defines it: the command and its parameters
// come in environment variables, the network configuration on stdin; a result
// or an error goes to stdout as JSON, and a non-zero exit marks an error.
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];

/** Well-known error codes from the CNI spec; 100 and up are this plugin's own. */
export const CniCodes = {
  INCOMPATIBLE_VERSION: 1,
  UNSUPPORTED_FIELD: 2,
  CONTAINER_UNKNOWN: 3,
  INVALID_ENVIRONMENT: 4,
  IO_FAILURE: 5,
  DECODE_FAILURE: 6,
  INVALID_CONFIG: 7,
  TRY_AGAIN_LATER: 11,
  PLUGIN_NOT_AVAILABLE: 50,
  CHECK_FAILED: 100,
} as const;

export class CniError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly details = '',
  ) {
    super(message);
  }

  toJSON(cniVersion: string): object {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export type Command = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';
const COMMANDS: Command[] = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'];

export interface Invocation {
  command: Command;
  containerId: string;
  netns: string;
  ifname: string;
  path: string;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new CniError(CniCodes.INVALID_ENVIRONMENT, `${name} is required for this command`);
  return value;
}

/** Reads CNI_* variables; which are required depends on the command, as the spec lists. */
export function readInvocation(env: NodeJS.ProcessEnv): Invocation {
  const command = env.CNI_COMMAND as Command;
  if (!COMMANDS.includes(command)) {
    throw new CniError(CniCodes.INVALID_ENVIRONMENT, `CNI_COMMAND must be one of ${COMMANDS.join(', ')}, got ${JSON.stringify(env.CNI_COMMAND ?? '')}`);
  }
  const perAttachment = command === 'ADD' || command === 'DEL' || command === 'CHECK';
  const invocation: Invocation = {
    command,
    containerId: perAttachment ? required(env, 'CNI_CONTAINERID') : (env.CNI_CONTAINERID ?? ''),
    netns: command === 'ADD' || command === 'CHECK' ? required(env, 'CNI_NETNS') : (env.CNI_NETNS ?? ''),
    ifname: perAttachment ? required(env, 'CNI_IFNAME') : (env.CNI_IFNAME ?? ''),
    path: env.CNI_PATH ?? '',
  };
  if (perAttachment && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(invocation.containerId)) {
    throw new CniError(CniCodes.INVALID_ENVIRONMENT, 'CNI_CONTAINERID must be alphanumeric with _ . -');
  }
  if (perAttachment && !/^[^/\s:]{1,15}$/.test(invocation.ifname)) {
    throw new CniError(CniCodes.INVALID_ENVIRONMENT, 'CNI_IFNAME must be a valid interface name (1 to 15 bytes, no / : or space)');
  }
  return invocation;
}

// The verbs of `ip netns`, as its usage lists them, and the failure ip gives
// for arguments it cannot use: the usage on stderr, exit 255.
import { IpFailure } from './failure.js';

export const IP_USAGE = [
  'Usage:\tnetns list',
  '\tnetns add NAME',
  '\tnetns attach NAME PID',
  '\tnetns set NAME NETNSID',
  '\tnetns [-all] delete [NAME]',
  '\tnetns identify [PID]',
  '\tnetns pids NAME',
  '\tnetns [-all] exec [NAME] cmd ...',
  '\tnetns monitor',
  '\tnetns list-id [target-nsid POSITIVE-INT] [nsid POSITIVE-INT]',
  'NETNSID := auto | POSITIVE-INT',
].join('\n');

export function usageFailure(): IpFailure {
  return new IpFailure(255, IP_USAGE);
}

/** ip's incomplete_command(): an option's value is missing. */
export function incompleteFailure(): IpFailure {
  return new IpFailure(255, 'Command line is not complete. Try option "help"');
}

const C_INTEGER = /^\s*[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
const INT_MAX = 2 ** 31 - 1;

/** ip's get_integer(..., 0): strtol with base 0 (42, 0x2a, 052) that fits an int; undefined if not. */
export function cInteger(text: string): number | undefined {
  if (!C_INTEGER.test(text)) return undefined;
  const trimmed = text.trim();
  const negative = trimmed.startsWith('-');
  const digits = trimmed.replace(/^[+-]/, '');
  const value = /^0[xX]/.test(digits) ? parseInt(digits.slice(2), 16) : /^0[0-7]+$/.test(digits) ? parseInt(digits, 8) : Number(digits);
  const signed = negative ? -value : value;
  return signed > INT_MAX || signed < -INT_MAX - 1 ? undefined : signed;
}

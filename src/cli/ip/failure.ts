// How a verb of `ip netns` fails: one line on stderr, worded as iproute2 6.1
// words it, and ip's exit status (1 for most failures, 255 where ip calls
// exit(-1): bad names, usage, a namespace exec cannot open; 2 where the
// kernel refused a netlink request).
import { native } from '../../core/native.js';

export class IpFailure extends Error {
  readonly status: number;

  constructor(status: number, line: string, options?: { cause?: unknown }) {
    super(line, options);
    this.status = status;
  }
}

/** What strerror(3) says for the error's errno, as ip prints it ("File exists", not libuv's "file already exists"). */
export function reason(error: unknown): string {
  const errno = (error as { errno?: unknown } | null)?.errno;
  if (typeof errno === 'number' && errno !== 0) {
    try {
      return native().strerror(Math.abs(errno));
    } catch {
      // no addon: the message we have is the next best thing
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/** ip's invarg(): `Error: argument "x" is wrong: why`, exit 255. */
export function invalidArgument(argument: string, why: string): IpFailure {
  return new IpFailure(255, `Error: argument "${argument}" is wrong: ${why}`);
}

/** A netlink request the kernel refused, as ip's rtnl_talk reports it: its extack, else the errno; exit 2. */
export function kernelRefusal(error: unknown): IpFailure {
  const extack = (error as { extack?: unknown } | null)?.extack;
  const line = typeof extack === 'string' && extack !== '' ? `Error: ${extack}.` : `RTNETLINK answers: ${reason(error)}`;
  return new IpFailure(2, line, { cause: error });
}

/** ip's refusal of a name (empty, '.', '..', with a '/', too long): exit 255. */
export function invalidNameFailure(name: string): IpFailure {
  return new IpFailure(255, `Invalid netns name "${name}"`);
}

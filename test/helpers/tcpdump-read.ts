// tcpdump as a test's independent reader of a pcap file. Run as uid 0, tcpdump
// gives its privileges up to the user "tcpdump" (initgroups, setuid) even to
// read a file, and in a user namespace that fails: setgroups is denied there
// and only the caller is mapped. So there it runs in a user namespace of its
// own, where it is not root and has nothing to give up, and reads the file
// from stdin (that namespace could not open it by path).
import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { inUserNamespace } from './privileges.js';

/** tcpdump's one-line summaries of every packet in `file`, as `tcpdump -nn -r FILE` prints them. */
export function tcpdumpLines(file: string): string[] {
  const [command, ...args] = [...(inUserNamespace ? ['unshare', '--user', '--'] : []), 'tcpdump', '-nn', '-r', '-'];
  const input = openSync(file, 'r');
  try {
    return execFileSync(command!, args, { encoding: 'utf8', stdio: [input, 'pipe', 'ignore'] })
      .split('\n')
      .filter(Boolean);
  } finally {
    closeSync(input);
  }
}

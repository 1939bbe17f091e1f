// `netns help` (and -h, --help): the ip netns verbs with what we add to
// them, then the other commands. On stdout, exit 0: asking is not an error.
import { IP_USAGE } from './ip/usage.js';

const GLOBAL = [
  'Options (before the verb, as ip takes them):',
  '  -j, -json          JSON output (list, list-id; identify and pids also take --json after the verb)',
  '  -p, -pretty        indented JSON',
  '  -a, -all           with delete and exec: every named namespace',
  '  --run-dir DIR      where named namespaces live (default /run/netns)',
  '  -V, --version      print the version',
  '  -h, --help         this help',
  '',
  'exec takes --no-etc before NAME: no /etc/netns/NAME or /sys setup.',
  'With no verb, netns lists, as ip netns does. Verbs may be abbreviated as ip allows (netns l, netns d NAME).',
].join('\n');

export async function helpText(): Promise<string> {
  const { toolsHelp } = await import('./tools.js');
  return `${IP_USAGE}\n\n${GLOBAL}\n\n${toolsHelp()}`;
}

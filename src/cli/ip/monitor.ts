// `netns monitor`: "add NAME" and "delete NAME" as names come and go in the
// run directory, until the command is stopped.
import { NetNS } from '../../netns.js';
import type { IpContext } from './context.js';

export async function monitor(_args: string[], context: IpContext): Promise<number> {
  for await (const event of NetNS.watch({ runDir: context.runDir })) process.stdout.write(`${event.type} ${event.name}\n`);
  return 0;
}

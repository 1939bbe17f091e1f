// `netns delete NAME` and `netns -all delete`: unmount and remove the name,
// as ip does. With -all, every name in the run directory, stopping at the
// first that cannot be removed (ip then still exits 0; so do we, having said
// which one failed).
import { ErrorCodes } from '../../core/errors.js';
import { NetNS } from '../../netns.js';
import { pathOf, type IpContext } from './context.js';
import { invalidNameFailure, IpFailure, reason } from './failure.js';

async function deleteOne(name: string, context: IpContext): Promise<void> {
  try {
    await NetNS.delete(name, { runDir: context.runDir });
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCodes.INVALID_NAME) throw invalidNameFailure(name);
    throw new IpFailure(1, `Cannot remove namespace file "${pathOf(name, context)}": ${reason(error)}`, { cause: error });
  }
}

export async function remove(args: string[], context: IpContext): Promise<number> {
  if (!context.all) {
    if (args.length < 1) throw new IpFailure(1, 'No netns name specified');
    await deleteOne(args[0]!, context);
    return 0;
  }
  for (const { name } of NetNS.list({ runDir: context.runDir })) {
    try {
      await deleteOne(name, context);
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      break;
    }
  }
  return 0;
}

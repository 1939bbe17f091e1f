// `netns list`: the named namespaces in directory order, each with the id
// this namespace has for it: `name (id: N)`, or with -j ip's
// [{"name","id"}] (plus path, inode and alive, ours). A missing run
// directory prints nothing at all, as ip.
import { fs } from '../../core/builtins.js';
import { NetNS } from '../../netns.js';
import { writeJson, writeLines, type IpContext } from './context.js';
import { idsOf } from './namespace-ids.js';

export async function list(_args: string[], context: IpContext): Promise<number> {
  if (!fs().existsSync(context.runDir)) return 0;
  const entries = NetNS.list({ runDir: context.runDir });
  const ids = await idsOf(entries);
  if (context.json) {
    writeJson(
      entries.map(({ name, path, inode, alive }) => ({ name, ...(ids.has(name) ? { id: ids.get(name) } : {}), path, inode, alive })),
      context,
    );
  } else {
    writeLines(entries.map(({ name }) => (ids.has(name) ? `${name} (id: ${ids.get(name)})` : name)));
  }
  return 0;
}

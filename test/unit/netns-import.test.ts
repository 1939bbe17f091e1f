// Importing netns must stay cheap (issue 14): a CNI plugin imports it on every
// command, and VERSION, GC and STATUS use no namespace. What import loads is
// checked here, not timed (bench/startup.js times it): the addon is mapped
// only when a namespace is first used, and the built-ins only some methods
// need are not loaded at all.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

const LAZY_BUILTINS = /NativeModule (net|dgram|child_process|worker_threads|vm|stream)$/;

describe('import netns', () => {
  it('maps the addon only when a namespace is first used, and that use works', async () => {
    const out = await runNodeScript(`
      import { readFileSync, statSync } from 'node:fs';
      const addonMapped = () => readFileSync('/proc/self/maps', 'utf8').includes('/netns.node');
      const { NetNS } = await import(${JSON.stringify(distUrl('index.js'))});
      await import(${JSON.stringify(distUrl('cni/index.js'))});
      const atImport = addonMapped();
      const ns = NetNS.open('/proc/self/ns/net');
      const same = ns.inode === statSync('/proc/self/ns/net').ino;
      ns.close();
      console.log(JSON.stringify({ atImport, same, afterUse: addonMapped() }));
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({ atImport: false, same: true, afterUse: true });
  });

  it('loads none of the built-ins only sockets, spawn and withNetNS need', async () => {
    const out = await runNodeScript(`
      const before = new Set(process.moduleLoadList);
      await import(${JSON.stringify(distUrl('index.js'))});
      await import(${JSON.stringify(distUrl('cni/index.js'))});
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m) && ${LAZY_BUILTINS}.test(m))));
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual([]);
  });
});

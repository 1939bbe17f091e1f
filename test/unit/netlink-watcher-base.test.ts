// NetlinkWatcher is a Readable, though joined to it when its first instance is
// made, so that node:stream is not loaded with the module (every netlink user
// imports it; test/root/cni-ptp-bundle.test.ts checks that a bundled plugin's
// ADD loads no node:stream). An ES module importer loads the streams anyway
// (with node:fs), so this checks the class, not the loading.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

describe('NetlinkWatcher', () => {
  it('is a Readable in every respect once made', async () => {
    const out = await runNodeScript(`
      const { openNetlink, NetlinkWatcher } = await import(${JSON.stringify(distUrl('netlink/index.js'))});
      const nl = await openNetlink();
      const watcher = await nl.watch({ links: true, existing: true });
      const { Readable } = await import('node:stream');
      const first = [];
      for await (const event of watcher) { first.push(event.type); if (event.type === 'synced') break; }
      const second = await nl.watch({ links: true });
      console.log(JSON.stringify({
        readable: [watcher instanceof Readable, watcher instanceof NetlinkWatcher, second instanceof Readable, NetlinkWatcher.prototype instanceof Readable, Object.getPrototypeOf(NetlinkWatcher) === Readable],
        objectMode: watcher.readableObjectMode,
        closed: watcher.destroyed,
        first: first.includes('link') && first.at(-1),
      }));
      second.close();
      nl.close();
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({ readable: [true, true, true, true, true], objectMode: true, closed: true, first: 'synced' });
  });
});

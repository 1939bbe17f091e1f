// checkNetns, the sandbox check every ADD, CHECK and DEL passes: the plugin's
// own namespace is refused by device and inode together (a namespace on
// another nsfs device with the same inode number is not ours), and only
// CNI_NETNS_OVERRIDE lets it through. /proc/self/ns/net opens without root.
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkNetns } from '../../dist/cni/sandbox.js';

const own = statSync('/proc/self/ns/net');
const env = (command: string, netnsOverride = false) => ({ command, netns: '/proc/self/ns/net', netnsOverride }) as never;

describe('checkNetns', () => {
  it("refuses the plugin's own namespace (code 8), unless the override says so", async () => {
    const host = () => ({ dev: own.dev, ino: own.ino });
    await expect(checkNetns(env('ADD'), host)).rejects.toMatchObject({ code: 8, message: 'CNI_NETNS "/proc/self/ns/net" is the plugin\'s own network namespace' });
    expect(await checkNetns(env('ADD', true), host)).toBe(false);
  });

  it('takes a namespace whose inode number is ours on another device as another namespace', async () => {
    expect(await checkNetns(env('CHECK'), () => ({ dev: own.dev + 1, ino: own.ino }))).toBe(false);
    expect(await checkNetns(env('CHECK'), () => ({ dev: own.dev, ino: own.ino + 1 }))).toBe(false);
  });

  it('is true for a DEL whose namespace is empty or gone, and false for the verbs without one', async () => {
    const host = () => ({ dev: 0, ino: 0 });
    expect(await checkNetns({ command: 'DEL', netns: '', netnsOverride: false } as never, host)).toBe(true);
    expect(await checkNetns({ command: 'DEL', netns: '/nonexistent/ns', netnsOverride: false } as never, host)).toBe(true);
    for (const command of ['GC', 'STATUS', 'VERSION']) expect(await checkNetns({ command, netns: '', netnsOverride: false } as never, host), command).toBe(false);
  });
});

// Importing netns/cni must stay cheap: a plugin is a new process per command,
// and VERSION, GC and STATUS need neither the addon nor child processes. What
// import loads is checked (not timed): no dlopen, none of the builtins that
// only delegation or namespaces need.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';

describe('import netns/cni', () => {
  it('loads no native addon and no child_process, fs/promises or worker_threads', async () => {
    const out = await runNodeScript(`
      const dlopen = process.dlopen;
      let opened = 0;
      process.dlopen = (...args) => (opened++, dlopen(...args));
      await import(${JSON.stringify(distUrl('cni/index.js'))});
      const loaded = process.moduleLoadList.filter((m) => /NativeModule (child_process|fs\\/promises|worker_threads)$/.test(m));
      console.log(JSON.stringify({ opened, loaded }));
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({ opened: 0, loaded: [] });
  });

  it('resolves by package name, netns/cni and netns/cni/plumbing, as a plugin imports them', async () => {
    const out = await runNodeScript(`
      const cni = await import('netns/cni');
      const plumbing = await import('netns/cni/plumbing');
      console.log(JSON.stringify([typeof cni.pluginMain, typeof cni.execAdd, typeof plumbing.setupVeth, typeof plumbing.configureInterface, typeof plumbing.collectGarbage]));
    `);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual(['function', 'function', 'function', 'function', 'function']);
  });
});

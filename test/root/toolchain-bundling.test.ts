// withNetNS from code that real toolchains built or run: esbuild bundles
// with netns external or included (then through `netns runtime` and
// NETNS_RUNTIME_DIR), `node -e/-p/--eval`, `node --import tsx`, tsc output,
// and node options a Worker refuses. Each runs in a project that installed
// the packed tarball (test/helpers/consumer-project.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { createConsumerProject, lastJson, type ConsumerProject } from '../helpers/consumer-project.js';
import { inodeOf } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

// The namespace fn's thread is in, read with require, or with import() (in an async fn).
const INODE = "require('node:fs').statSync('/proc/thread-self/ns/net').ino";
const INODE_BY_IMPORT = "(await import('node:fs')).statSync('/proc/thread-self/ns/net').ino";

describe.skipIf(!privileged)('withNetNS from real toolchains', () => {
  let project: ConsumerProject;
  let network: TestNetwork<'a'>;
  let name: string;
  let inode: number;

  beforeAll(async () => {
    [project, network] = await Promise.all([createConsumerProject(), createTestNetwork({ hosts: { a: {} } })]);
    name = network.names.a;
    inode = inodeOf(`/run/netns/${name}`);
  }, 120_000);

  afterAll(async () => {
    project?.remove();
    await closePool();
    await network?.delete();
  });

  describe('an esbuild bundle with netns external', () => {
    const forms = {
      require: `() => [${INODE}, typeof require('node:os').hostname]`,
      import: `async () => [${INODE_BY_IMPORT}, typeof (await import('node:os')).hostname]`,
    };
    for (const format of ['esm', 'cjs'] as const) {
      for (const [form, fn] of Object.entries(forms)) {
        it(`${format}, fn uses ${form}`, async () => {
          const app = format === 'esm'
            ? `import { withNetNS } from 'netns';\nconsole.log(JSON.stringify(await withNetNS(process.argv[2], ${fn})));\n`
            : `const { withNetNS } = require('netns');\nwithNetNS(process.argv[2], ${fn}).then((v) => console.log(JSON.stringify(v)));\n`;
          const source = project.write(`src/external-${format}-${form}.${format === 'esm' ? 'mjs' : 'cjs'}`, app);
          const out = `out/external-${format}-${form}.${format === 'esm' ? 'mjs' : 'cjs'}`;
          const built = await project.tool('esbuild', [source, '--bundle', '--platform=node', `--format=${format}`, '--external:netns', `--outfile=${out}`, '--log-level=error']);
          expect(built.stderr).toBe('');
          expect(lastJson(await project.node([out, name]))).toEqual([inode, 'function']);
        });
      }
    }
  });

  describe('an esbuild bundle that includes netns', () => {
    const app = [
      "import { NetNS, withNetNS } from 'netns';",
      `const inside = await withNetNS(process.argv[2], async () => ${INODE_BY_IMPORT});`,
      'const ns = NetNS.open(process.argv[2]);',
      "const { stdout } = await ns.execFile('readlink', ['/proc/self/ns/net']);",
      'ns.close();',
      'console.log(JSON.stringify([inside, stdout.trim()]));',
    ].join('\n');
    let bundle: string;

    beforeAll(async () => {
      const source = project.write('src/included.mjs', app);
      bundle = `${project.dir}/deploy/app.mjs`;
      const built = await project.tool('esbuild', [source, '--bundle', '--platform=node', '--format=esm', `--outfile=${bundle}`, '--log-level=error']);
      expect(built.stderr).toBe('');
    });

    it('without NETNS_RUNTIME_DIR fails with ERR_NETNS_ADDON_MISSING, saying where it looked and what to do', async () => {
      const result = await project.node([bundle, name]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ERR_NETNS_ADDON_MISSING');
      expect(result.stderr).toContain('netns cannot find its native addon (netns.node)');
      // the bundle is in <project>/deploy: two folders up is where the package would be, were it installed there
      expect(result.stderr).toContain(`looked for:\n  (nothing: ${dirname(project.dir)}/package.json is not netns's, so this copy of netns is in a bundle)`);
      expect(result.stderr).toContain('NETNS_RUNTIME_DIR is not set');
      expect(result.stderr).toContain('npx netns runtime <dir>');
      expect(result.stderr).toContain('npm install-scripts approve netns && npm rebuild netns');
    });

    it('with a NETNS_RUNTIME_DIR that lacks the files, names the path it looked for', async () => {
      const empty = `${project.dir}/empty-runtime`;
      const result = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: empty } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ERR_NETNS_ADDON_MISSING');
      expect(result.stderr).toContain(`\n  ${empty}/netns.node\n`);
      expect(result.stderr).toContain(`NETNS_RUNTIME_DIR is ${empty}.`);
    });

    it('after `netns runtime <dir>`, with NETNS_RUNTIME_DIR: runs fn in the namespace and spawns there', async () => {
      const runtime = `${project.dir}/deploy/netns-runtime`;
      // A link planted where the stamp goes is replaced, not written through.
      mkdirSync(runtime, { recursive: true });
      const victim = project.write('victim.txt', 'VICTIM');
      symlinkSync(victim, `${runtime}/netns-runtime.json`);
      const filled = await project.run(`${project.dir}/node_modules/.bin/netns`, ['runtime', runtime, '--json']);
      expect(readFileSync(victim, 'utf8')).toBe('VICTIM');
      expect(readdirSync(runtime).sort()).toEqual(['netns-exec', 'netns-runtime.json', 'netns-sandbox', 'netns-worker.mjs', 'netns.node']); // no staging left
      expect(filled, filled.stderr).toMatchObject({ code: 0 });
      expect(JSON.parse(filled.stdout)).toEqual({
        dir: runtime,
        files: ['netns.node', 'netns-exec', 'netns-sandbox', 'netns-worker.mjs', 'netns-runtime.json'].map((file) => `${runtime}/${file}`),
      });
      const result = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: runtime }, cwd: `${project.dir}/deploy` });
      expect(lastJson(result)).toEqual([inode, `net:[${inode}]`]);
    });

    it("refuses a runtime folder another netns version filled, or one no netns runtime filled, saying so", async () => {
      const runtime = `${project.dir}/deploy/stamped-runtime`;
      expect(await project.run(`${project.dir}/node_modules/.bin/netns`, ['runtime', runtime])).toMatchObject({ code: 0 });
      const stamp = `${runtime}/netns-runtime.json`;
      expect(lastJson(await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: runtime } }))).toEqual([inode, `net:[${inode}]`]);
      writeFileSync(stamp, JSON.stringify({ version: '0.0.1' }));
      const older = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: runtime } });
      expect(older.code).not.toBe(0);
      expect(older.stderr).toContain('ERR_NETNS_RUNTIME_MISMATCH');
      expect(older.stderr).toMatch(/holds netns 0\.0\.1's files, and this program has netns \d+\.\d+\.\d+: fill it again with `npx netns runtime /);
      rmSync(stamp);
      const unstamped = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: runtime } });
      expect(unstamped.stderr).toContain('no netns-runtime.json saying which netns filled it');
      execFileSync('mkfifo', [stamp]); // read whole, it would block the program at import
      const fifo = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: runtime } });
      expect(fifo.stderr).toContain('ERR_NETNS_RUNTIME_MISMATCH');
    });
  });

  it('a CommonJS bundle that includes netns and netns/addrset runs from its runtime folder, named relative to where it started', async () => {
    const app = [
      "const { withNetNS } = require('netns');",
      "const { AddressSets } = require('netns/addrset');",
      "process.chdir('/'); // NETNS_RUNTIME_DIR is relative: it still means the starting directory",
      `withNetNS(process.argv[2], () => ${INODE}).then((inode) => console.log(JSON.stringify([inode, typeof AddressSets.open])));`,
    ].join('\n');
    const source = project.write('src/included-cjs.cjs', app);
    const bundle = `${project.dir}/deploy-cjs/app.cjs`;
    const built = await project.tool('esbuild', [source, '--bundle', '--platform=node', '--format=cjs', `--outfile=${bundle}`, '--log-level=error']);
    expect(built.stderr).toBe('');
    const runtime = `${project.dir}/deploy-cjs/netns-runtime`;
    expect(await project.run(`${project.dir}/node_modules/.bin/netns`, ['runtime', runtime])).toMatchObject({ code: 0 });
    const result = await project.node([bundle, name], { env: { NETNS_RUNTIME_DIR: 'netns-runtime' }, cwd: `${project.dir}/deploy-cjs` });
    expect(lastJson(result)).toEqual([inode, 'function']);
  });

  it("two copies of netns in one program take each other's NetNS (withNetNS, AddressSets.open)", async () => {
    const dist = new URL('../../dist/', import.meta.url).href;
    const app = [
      "import { NetNS, withNetNS } from 'netns';",
      `const other = await import('${dist}index.js');`,
      `const { AddressSets } = await import('${dist}addrset/index.js');`,
      'const installed = NetNS.open(process.argv[2]);',
      'const fromOther = other.NetNS.open(process.argv[2]);',
      `const seen = [await other.withNetNS(installed, () => ${INODE}), await withNetNS(fromOther, () => ${INODE})];`,
      "const sets = await AddressSets.open({ netns: installed, table: 'copies' });",
      'await sets.close();',
      'installed.close();',
      'fromOther.close();',
      'await Promise.all([other.closePool(), (await import("netns")).closePool()]);',
      "console.log(JSON.stringify([...seen, sets.table]));",
    ].join('\n');
    project.write('src/two-copies.mjs', app);
    expect(lastJson(await project.node(['src/two-copies.mjs', name]))).toEqual([inode, inode, 'copies']);
  });

  describe('node with a script given on the command line', () => {
    const esm = `import { withNetNS } from 'netns';\nconsole.log(JSON.stringify(await withNetNS(process.argv[1], () => ${INODE})));`;
    const script = `import('netns').then(({ withNetNS }) => withNetNS(process.argv[1], () => ${INODE})).then((v) => console.log(JSON.stringify(v)))`;

    it('node --input-type=module -e', async () => {
      expect(lastJson(await project.node(['--input-type=module', '-e', esm, name]))).toBe(inode);
    });

    it('NODE_OPTIONS=--input-type=module node -e (NODE_OPTIONS reaches pool threads too)', async () => {
      expect(lastJson(await project.node(['-e', esm, name], { env: { NODE_OPTIONS: '--input-type=module' } }))).toBe(inode);
    });

    it('node --frozen-intrinsics (Error cannot be changed: fn resolves from the cwd)', async () => {
      expect(lastJson(await project.node(['--frozen-intrinsics', '--input-type=module', '-e', esm, name]))).toBe(inode);
    });

    it('node --eval', async () => {
      expect(lastJson(await project.node(['--eval', script, name]))).toBe(inode);
    });

    it('node -p', async () => {
      const result = await project.node(['-p', `${script}, 'started'`, name]);
      // whether -p prints its value before or after the promise's output differs between Node versions
      expect(result.stdout.split('\n')).toContain('started');
      expect(result.stdout.split('\n')).toContain(JSON.stringify(inode));
    });

    it('node with options a Worker refuses (--title x, --max-old-space-size, V8 flags)', async () => {
      const options = ['--title', 'netns-consumer', '--max-old-space-size=256', '--expose-gc', '--stack-trace-limit=20'];
      const esm = `import { withNetNS } from 'netns';\nconsole.log(JSON.stringify(await withNetNS(process.argv[1], () => ${INODE})));`;
      expect(lastJson(await project.node([...options, '--input-type=module', '-e', esm, name]))).toBe(inode);
    });
  });

  // Only tsx's require hook: on Node 20, tsx registers its import() hooks on
  // the main thread only (so does a plain Worker given --import tsx).
  it('node --import tsx: fn can require a .ts file (the loader reaches the worker)', async () => {
    const helper = project.write('ts/helper.ts', 'export const answer: number = 42;\n');
    project.write(
      'ts/app.ts',
      [
        "import { withNetNS } from 'netns';",
        `const seen = await withNetNS(process.argv[2]!, (helper: string) => [${INODE}, require(helper).answer], ${JSON.stringify(helper)});`,
        'console.log(JSON.stringify(seen));',
      ].join('\n'),
    );
    project.write('ts/package.json', JSON.stringify({ type: 'module' }));
    expect(lastJson(await project.node(['--import', 'tsx', 'ts/app.ts', name]))).toEqual([inode, 42]);
  });

  it("tsc output (nodenext) runs, type-checked against the package's own types", async () => {
    project.write('tsc/package.json', JSON.stringify({ type: 'module' }));
    project.write(
      'tsc/app.ts',
      [
        "import { withNetNS } from 'netns';",
        // the project has no @types/node
        'declare const process: { argv: string[] };',
        'declare const require: (id: string) => any;',
        `const seen: number = await withNetNS(process.argv[2]!, () => ${INODE} as number);`,
        'console.log(JSON.stringify(seen));',
      ].join('\n'),
    );
    const compiled = await project.tool('tsc', ['--module', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', 'tsc/app.ts']);
    expect(compiled, compiled.stdout).toMatchObject({ code: 0 });
    expect(lastJson(await project.node(['tsc/app.js', name]))).toBe(inode);
  });
});

// One consumer program (test/fixtures/consumer/app.ts and its worker module
// work.ts) built by each toolchain users run, in a project that installed the
// packed tarball: fn uses an inner named function, an arrow const, a class
// with #private members, object spread, async, require and import(); the
// worker module keeps #private state and is called by name. Each build must
// give the same answer, from inside the namespace, as the source means.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool } from '../../dist/index.js';
import { createTestNetwork, type TestNetwork } from '../../dist/testing.js';
import { createConsumerProject, lastJson, type CommandResult, type ConsumerProject } from '../helpers/consumer-project.js';
import { inodeOf } from '../helpers/process-state.js';
import { privileged } from '../helpers/privileges.js';

const fixture = (file: string): string => readFileSync(new URL(`../fixtures/consumer/${file}`, import.meta.url), 'utf8');

interface Build {
  /** Compiles src/app.ts and src/work.ts into out/<name>/; returns the app and worker module to run. */
  build(project: ConsumerProject, out: string): Promise<{ app: string; work: string; node?: string[] }>;
  /** A helper the compiler must have written into the output, so the row tests what it says. */
  emits: RegExp[];
}

async function mustBuild(result: Promise<CommandResult>): Promise<void> {
  const done = await result;
  expect(done, `${done.stdout}${done.stderr}`).toMatchObject({ code: 0 });
}

// The project has no @types/node of its own: tsc reads the repository's.
const typeRoots = new URL('../../node_modules/@types', import.meta.url).pathname;

function tsc(target: string, module: 'esm' | 'cjs', extra: string[] = []): Build['build'] {
  return async (project, out) => {
    const moduleOptions = module === 'esm' ? ['--module', 'es2022', '--moduleResolution', 'bundler'] : ['--module', 'commonjs', '--moduleResolution', 'node10', '--esModuleInterop'];
    await mustBuild(
      project.tool('tsc', ['--target', target, ...moduleOptions, ...extra, '--strict', '--skipLibCheck', '--typeRoots', typeRoots, '--types', 'node', '--outDir', out, 'src/app.ts', 'src/work.ts']),
    );
    project.write(`${out}/package.json`, JSON.stringify({ type: module === 'esm' ? 'module' : 'commonjs' }));
    return { app: `${out}/app.js`, work: `${project.dir}/${out}/work.js` };
  };
}

function esbuild(format: 'esm' | 'cjs', extra: string[] = []): Build['build'] {
  return async (project, out) => {
    const ext = format === 'esm' ? 'mjs' : 'cjs';
    const common = ['--platform=node', `--format=${format}`, '--log-level=error', ...extra];
    await mustBuild(project.tool('esbuild', ['src/app.ts', '--bundle', '--external:netns', ...common, `--outfile=${out}/app.${ext}`]));
    await mustBuild(project.tool('esbuild', ['src/work.ts', ...common, `--outfile=${out}/work.${ext}`]));
    return { app: `${out}/app.${ext}`, work: `${project.dir}/${out}/work.${ext}` };
  };
}

const BUILDS: Record<string, Build> = {
  'tsc --target es2022, then node': { build: tsc('es2022', 'esm'), emits: [] },
  'tsc --target es2017 (#private: __classPrivateFieldGet, __classPrivateFieldSet)': {
    build: tsc('es2017', 'esm'),
    emits: [/__classPrivateFieldGet\(/, /__classPrivateFieldSet\(/],
  },
  'tsc --target es2015, CommonJS, importHelpers (tslib_1.__awaiter, import() via __importStar)': {
    build: tsc('es2015', 'cjs', ['--importHelpers']),
    emits: [/tslib_1\.__awaiter\(/, /tslib_1\.__importStar\(/],
  },
  'tsx (keepNames: __name)': {
    build: async () => ({ app: 'src/app.ts', work: '', node: ['--import', 'tsx'] }),
    emits: [],
  },
  'esbuild --bundle --external:netns, esm (require: __require)': { build: esbuild('esm'), emits: [/__require\(/] },
  'esbuild --bundle --external:netns --keep-names --target=es2020, cjs (__name, __privateAdd, __privateWrapper)': {
    build: esbuild('cjs', ['--keep-names', '--target=es2020']),
    emits: [/__name\(/, /__privateAdd\(/, /__privateWrapper\(/],
  },
  'esbuild --bundle --external:netns --target=es2016, esm (__async, __spreadValues, __privateGet)': {
    build: esbuild('esm', ['--target=es2016']),
    emits: [/__async\(/, /__spreadValues\(/, /__privateGet\(/],
  },
};

describe.skipIf(!privileged)('fn and worker modules, built by each toolchain', () => {
  let project: ConsumerProject;
  let network: TestNetwork<'a'>;
  let target: string;
  let inode: number;

  beforeAll(async () => {
    [project, network] = await Promise.all([createConsumerProject(), createTestNetwork({ hosts: { a: {} } })]);
    target = `/run/netns/${network.names.a}`;
    inode = inodeOf(target);
    project.write('src/package.json', JSON.stringify({ type: 'module' }));
    project.write('src/app.ts', fixture('app.ts'));
    project.write('src/work.ts', fixture('work.ts'));
  }, 120_000);

  afterAll(async () => {
    project?.remove();
    await closePool();
    await network?.delete();
  });

  const expected = () => ({
    fromFn: {
      ok: true,
      value: {
        named: 'named',
        namedName: 'named',
        arrow: 40,
        arrowName: 'arrow',
        counter: 21,
        made: 1,
        spread: { a: 1, b: 2 },
        platform: 'linux',
        basename: 'b',
        namespace: inode,
      },
    },
    fromModule: { ok: true, value: { label: 'xx', calls: 1, namespace: inode } },
  });

  for (const [title, { build, emits }] of Object.entries(BUILDS)) {
    it(title, async () => {
      const out = `out/${title.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`;
      const { app, work, node = [] } = await build(project, out);
      const workPath = work || `${project.dir}/src/work.ts`;
      for (const helper of emits) expect(readFileSync(`${project.dir}/${app}`, 'utf8')).toMatch(helper);
      expect(lastJson(await project.node([...node, app, target, workPath]))).toEqual(expected());
    });
  }

  it('minified code: fn fails with an explanation that points to the module form, which works', async () => {
    const { app, work } = await esbuild('esm', ['--minify', '--target=es2016'])(project, 'out/minified');
    const { fromFn, fromModule } = lastJson(await project.node([app, target, work])) as { fromFn: unknown; fromModule: unknown };
    expect(fromFn).toMatchObject({ ok: false, error: { name: 'ReferenceError', message: expect.stringMatching(/minif.*workerModule\(\)/) } });
    expect(fromModule).toEqual(expected().fromModule);
  });
});

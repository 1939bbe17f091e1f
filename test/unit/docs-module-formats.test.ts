// What the README's "Module formats" section says, checked with this Node and
// this repository's TypeScript: every entry point can be required from
// CommonJS without a flag or a warning, and each tsconfig setting named there
// compiles (or fails with the very error quoted) when a file imports netns.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../helpers/node-child.js';

const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { type: string; exports: Record<string, unknown> };
const entryPoints = Object.keys(pkg.exports)
  .filter((key) => key !== './package.json')
  .map((key) => `netns${key.slice(1)}`);

// A project beside the checkout with netns "installed" as a link to it, as a user's project sees it.
const project = mkdtempSync(join(tmpdir(), 'netns-formats-'));
mkdirSync(join(project, 'node_modules'));
symlinkSync(packageRoot, join(project, 'node_modules', 'netns'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

function runNode(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script], { cwd: project }, (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }));
  });
}

function write(name: string, text: string): string {
  writeFileSync(join(project, name), text);
  return join(project, name);
}

describe('the package as ESM and from CommonJS', () => {
  it('is ESM, and the README names every entry point', () => {
    expect(pkg.type).toBe('module');
    expect(readme).toContain('"type": "module"');
    for (const entry of entryPoints) expect(readme, entry).toContain(`\`${entry}\``);
  });

  it('every entry point can be required from CommonJS on this Node, with no flag and no warning', async () => {
    const script = write('require-all.cjs', `for (const e of ${JSON.stringify(entryPoints)}) console.log(e, Object.keys(require(e)).length > 0);\n`);
    const { code, stdout, stderr } = await runNode(script);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(entryPoints.map((entry) => `${entry} true\n`).join(''));
  });
});

// One compiler host for every program below: the lib and @types/node files are parsed once.
const host = ts.createCompilerHost({});
const parsed = new Map<string, ts.SourceFile | undefined>();
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (fileName, language, ...rest) => {
  const key = `${fileName}\0${JSON.stringify(language)}`;
  if (!parsed.has(key)) parsed.set(key, getSourceFile(fileName, language, ...rest));
  return parsed.get(key);
};

/** The diagnostics of compiling `file` alone, as `code: message` lines. */
function compile(file: string, options: ts.CompilerOptions): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    typeRoots: [join(packageRoot, 'node_modules', '@types')],
    ...options,
  }, host);
  return ts.getPreEmitDiagnostics(program).map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

const { ModuleKind, ModuleResolutionKind } = ts;
const node16 = { module: ModuleKind.Node16, moduleResolution: ModuleResolutionKind.Node16 };
const nodenext = { module: ModuleKind.NodeNext, moduleResolution: ModuleResolutionKind.NodeNext };
const uses = `import { NetNS } from 'netns';
import { openNetlink } from 'netns/netlink';
export async function names(): Promise<string[]> {
  const nl = await openNetlink(NetNS.current());
  try { return (await nl.links.list()).map((link) => link.name); } finally { nl.close(); }
}
`;

describe(`TypeScript ${ts.version} settings the README names`, () => {
  it('ESM files compile under nodenext and node16, and under bundler', () => {
    const mts = write('esm.mts', uses);
    expect(compile(mts, nodenext)).toEqual([]);
    expect(compile(mts, node16)).toEqual([]);
    expect(compile(write('bundled.ts', uses), { module: ModuleKind.ESNext, moduleResolution: ModuleResolutionKind.Bundler })).toEqual([]);
  });

  it('a .cts under node16 fails with the error the README quotes; nodenext, node20 or import() fix it', async () => {
    const cts = write('app.cts', uses);
    const errors = compile(cts, node16);
    expect(errors.map((e) => e.slice(0, e.indexOf(':')))).toEqual(['TS1479', 'TS1479']);
    const quoted = errors[0]!.slice(0, errors[0]!.indexOf(" Consider writing a dynamic 'import(")).replace(/\.$/, '');
    expect(readme.replace(/\s*\n\s*/g, ' ')).toContain(quoted);
    expect(compile(cts, nodenext)).toEqual([]);
    expect(compile(cts, { module: ModuleKind.Node20, moduleResolution: ModuleResolutionKind.Node16 })).toEqual([]);
    // What nodenext emits for it is a require() of netns, which this Node runs.
    const emitted = ts.transpileModule(uses + 'names.call(null);\n', { fileName: 'app.cts', compilerOptions: nodenext }).outputText;
    expect(emitted).toContain('require("netns")');
    write('app.cjs', emitted.replace('names.call(null);', "console.log(typeof exports.names, typeof require('netns').NetNS.current);"));
    expect(await runNode(join(project, 'app.cjs'))).toEqual({ code: 0, stdout: 'function function\n', stderr: '' });
    const dynamic = write('dynamic.cts', "export const load = async () => (await import('netns')).NetNS.current();\n");
    expect(compile(dynamic, node16)).toEqual([]);
  });

  it('node10 resolution finds the main entry but no subpath', () => {
    const errors = compile(write('old.ts', uses), { module: ModuleKind.CommonJS, moduleResolution: ModuleResolutionKind.Node10 });
    const unresolved = errors.filter((e) => e.startsWith('TS2307')).map((e) => e.split('\n')[0]);
    expect(unresolved).toEqual(["TS2307: Cannot find module 'netns/netlink' or its corresponding type declarations."]);
    expect(readme).toContain('`TS2307` for `netns/netlink`');
  });
});

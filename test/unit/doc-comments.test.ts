// Every public export of every entry point carries a doc comment: it is what a
// user's editor shows on hover, and for most of them the only reference there
// is. The walker reads the source modules behind package.json "exports" with
// the TypeScript compiler (so re-exports and `export *` resolve as a user's
// import does) and reports what lacks one as `entry: Symbol[.member] (file:line)`.
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Entry {
  /** The import specifier a user writes, e.g. `netns/cni`. */
  name: string;
  /** The source module behind it. */
  file: string;
}

interface Missing {
  entry: string;
  symbol: string;
  file: string;
  line: number;
}

/** package.json "exports" mapped from dist/*.d.ts back to src/*.ts. */
function entryPoints(): Entry[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([key, target]) => {
    const types = typeof target === 'string' ? undefined : target.types;
    if (!types) return [];
    const name = key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`;
    const file = join(root, types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'));
    return [{ name, file }];
  });
}

/**
 * A doc comment with something in it: text, or a tag such as @deprecated; for
 * a constructor parameter property, also the constructor's `@param` for it.
 */
function hasDoc(node: ts.Node): boolean {
  return ts.getJSDocCommentsAndTags(node).some((doc) => {
    if (ts.isJSDocParameterTag(doc)) return Boolean(ts.getTextOfJSDocComment(doc.comment)?.trim());
    if (!ts.isJSDoc(doc)) return false;
    const text = ts.getTextOfJSDocComment(doc.comment)?.trim();
    return Boolean(text) || (doc.tags?.length ?? 0) > 0;
  });
}

/** `@internal` declarations are stripped from the published types (stripInternal). */
function isInternal(node: ts.Node): boolean {
  return ts.getJSDocTags(node).some((tag) => tag.tagName.text === 'internal');
}

/**
 * Not judged: private, #private, protected and @internal members, and
 * `override`s, whose hover shows the overridden member's doc (Readable's
 * `_read`, Error's `name`).
 */
function isHidden(decl: ts.Declaration): boolean {
  const name = ts.getNameOfDeclaration(decl);
  if (name && ts.isPrivateIdentifier(name)) return true;
  const hidden = ts.ModifierFlags.Private | ts.ModifierFlags.Protected | ts.ModifierFlags.Override;
  if (ts.getCombinedModifierFlags(decl) & hidden) return true;
  return isInternal(decl);
}

/** Parameter properties (`constructor(readonly dir: string)`) are members too. */
const isMember = (decl: ts.Declaration): boolean =>
  MEMBER_KINDS.has(decl.kind) || (ts.isParameter(decl) && ts.isParameterPropertyDeclaration(decl, decl.parent));

const MEMBER_KINDS = new Set([
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.MethodSignature,
  ts.SyntaxKind.PropertySignature,
]);

const TOP_LEVEL =
  ts.SymbolFlags.Function |
  ts.SymbolFlags.Class |
  ts.SymbolFlags.Interface |
  ts.SymbolFlags.TypeAlias |
  ts.SymbolFlags.Enum |
  ts.SymbolFlags.Variable;

/**
 * What `entryFile` exports without a doc comment. Only declarations in files
 * `isOurs` accepts are judged: members inherited from Node's or the lib's
 * types are not this package's to document.
 */
function missingDocs(program: ts.Program, entry: Entry, isOurs: (file: string) => boolean): Missing[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry.file);
  if (!source) throw new Error(`${entry.name}: ${entry.file} is not in the program`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) return [];
  const missing: Missing[] = [];
  const seen = new Set<ts.Node>();
  const report = (symbol: string, decl: ts.Node) => {
    const file = decl.getSourceFile();
    const line = file.getLineAndCharacterOfPosition(decl.getStart()).line + 1;
    missing.push({ entry: entry.name, symbol, file: file.fileName, line });
  };
  // A symbol is documented when any of its declarations is (overloads, a
  // getter/setter pair, a merged interface).
  const judge = (label: string, decls: readonly ts.Declaration[]) => {
    const ours = decls.filter((decl) => isOurs(decl.getSourceFile().fileName));
    if (ours.length === 0 || ours.some(isHidden) || seen.has(ours[0]!)) return;
    seen.add(ours[0]!);
    if (!ours.some(hasDoc)) report(label, ours[0]!);
  };
  const judgeMembers = (owner: string, properties: readonly ts.Symbol[]) => {
    for (const property of properties) {
      const decls = (property.declarations ?? []).filter(isMember);
      const name = decls[0] && ts.getNameOfDeclaration(decls[0]);
      if (!name) continue;
      judge(`${owner}.${name.getText()}`, decls);
    }
  };
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (!(symbol.flags & TOP_LEVEL)) continue;
    const decls = symbol.declarations ?? [];
    const ours = decls.filter((decl) => isOurs(decl.getSourceFile().fileName));
    if (ours.length === 0 || ours.some(isInternal)) continue;
    const name = exported.getName();
    judge(name, decls);
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
      judgeMembers(name, checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)));
    }
    if (symbol.flags & ts.SymbolFlags.Class) {
      const statics = checker.getPropertiesOfType(checker.getTypeOfSymbolAtLocation(symbol, ours[0]!));
      judgeMembers(name, statics.filter((property) => property.getName() !== 'prototype'));
    }
  }
  return missing;
}

function format(missing: Missing[]): string[] {
  return missing.map(({ entry, symbol, file, line }) => `${entry}: ${symbol} (${relative(root, file)}:${line})`);
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.build.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(configPath)).options;
}

/** A program over in-memory files, for the walker's own check. */
function programOf(files: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = { ...compilerOptions(), noEmit: true };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  const directoryExists = host.directoryExists?.bind(host);
  const dirs = new Set(Object.keys(files).map((path) => dirname(path)));
  host.fileExists = (path) => path in files || fileExists(path);
  host.directoryExists = (path) => dirs.has(path) || (directoryExists?.(path) ?? true);
  host.readFile = (path) => files[path] ?? readFile(path);
  host.getSourceFile = (path, language) =>
    path in files ? ts.createSourceFile(path, files[path]!, language, true) : getSourceFile(path, language);
  return ts.createProgram(Object.keys(files), options, host);
}

describe('doc comments on the public API', () => {
  const entries = entryPoints();
  const srcDir = join(root, 'src') + '/';
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    { ...compilerOptions(), noEmit: true },
  );
  const missing = entries.flatMap((entry) => missingDocs(program, entry, (file) => file.startsWith(srcDir)));

  it('finds every entry point of package.json', () => {
    expect(entries.map((entry) => entry.name)).toContain('netns/cni/plumbing');
    for (const entry of entries) expect(program.getSourceFile(entry.file), entry.name).toBeDefined();
  });

  it('has none missing', () => {
    expect(format(missing)).toEqual([]);
  });

  it('flags an undocumented export, member and re-export, and accepts documented and hidden ones', () => {
    const dir = join(root, 'doc-comments-fixture');
    const files = {
      [join(dir, 'index.ts')]: [
        "export * from './more.js';",
        "export { Inner as Renamed } from './renamed.js';",
        '/** Says what it does. */',
        'export function documented(): void {}',
        'export function bare(): void {}',
        '/** A class. */',
        'export class Box {',
        '  /** Documented. */',
        '  open(): void {}',
        '  close(): void {}',
        '  static make(): Box { return new Box(); }',
        '  private hidden = 1;',
        '  #secret = 2;',
        '  /** @internal */',
        '  wiring(): void {}',
        '  /** @param size documented here. */',
        '  constructor(readonly size: number, readonly bare: number, private readonly inner = 0) {}',
        '}',
        '/** @internal */',
        'export const internalOnly = 1;',
      ].join('\n'),
      [join(dir, 'more.ts')]: [
        'export const LIMIT = 3;',
        'export type Alias = string;',
        'export enum Mode { A }',
        '/** Documented, with one member undocumented. */',
        'export interface Documented {',
        '  /** Yes. */',
        '  a: number;',
        '  b: string;',
        '}',
        '/** Overrides take the base member\'s doc. */',
        "export class Oops extends Error { override name = 'Oops'; }",
      ].join('\n'),
      [join(dir, 'renamed.ts')]: 'export interface Inner {\n  /** Yes. */\n  c: number;\n}',
    };
    const fixture = programOf(files);
    const found = missingDocs(fixture, { name: 'fixture', file: join(dir, 'index.ts') }, (file) => file in files);
    const labels = found.map(({ symbol, file, line }) => `${symbol} ${relative(dir, file)}:${line}`);
    expect(labels.sort()).toEqual(
      [
        'Alias more.ts:2',
        'Box.bare index.ts:17',
        'Box.close index.ts:10',
        'Box.make index.ts:11',
        'Documented.b more.ts:8',
        'LIMIT more.ts:1',
        'Mode more.ts:3',
        'Renamed renamed.ts:1',
        'bare index.ts:5',
      ].sort(),
    );
  });
});

// The keys netlink's methods accept at run time (src/netlink/keys.ts) are
// exactly the property names of the types they declare: read here from
// src/netlink/*.ts with the TypeScript compiler. A key added to a spec type
// but not to its list would be refused although the types allow it; one left
// in a list after its type lost it would be silently ignored again.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FILTER_KIND_KEYS, filterSpecKeys, LINK_KIND_KEYS, linkSpecKeys, QDISC_KIND_KEYS, qdiscSpecKeys, SPEC_KEYS } from '../../dist/netlink/keys.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = ['links', 'routes', 'addresses', 'neighbours', 'nsids', 'qdiscs', 'classes', 'filters'].map((name) => join(root, 'src/netlink', `${name}.ts`));

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.build.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  return { ...ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(configPath)).options, noEmit: true };
}

const program = ts.createProgram(files, compilerOptions());
const checker = program.getTypeChecker();

/** Each public method's parameters of the classes Links, Routes, Addresses, Neighbours, Nsids, Qdiscs, Classes, Filters, as `Class.method#i`. */
function publicParameters(): Map<string, ts.Type> {
  const out = new Map<string, ts.Type>();
  for (const file of files) {
    ts.forEachChild(program.getSourceFile(file)!, (node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !ts.isIdentifier(member.name)) continue;
        member.parameters.forEach((parameter, i) => {
          out.set(`${node.name!.text}.${(member.name as ts.Identifier).text}#${i}`, checker.getNonNullableType(checker.getTypeAtLocation(parameter)));
        });
      }
    });
  }
  return out;
}

/** The object shapes a parameter's type allows: a union's members, without strings, numbers, arrays and namespace handles. */
function objectShapes(type: ts.Type): ts.Type[] {
  const members = type.isUnion() ? type.types : [type];
  return members.filter((t) => {
    if ((t.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) === 0) return false;
    return !['Array', 'ReadonlyArray', 'NsHandle'].includes(t.getSymbol()?.getName() ?? '');
  });
}

function keysOf(type: ts.Type): string[] {
  return checker.getPropertiesOfType(type).map((p) => p.getName()).sort();
}

function propertyType(type: ts.Type, name: string): ts.Type {
  return checker.getNonNullableType(checker.getTypeOfSymbol(type.getProperty(name)!));
}

const sorted = (keys: readonly string[] | undefined): string[] => [...(keys ?? [])].sort();

/** Which runtime list each object parameter is checked against. */
const LISTS: Record<string, keyof typeof SPEC_KEYS> = {
  'Links.set#1': 'links.set',
  'Links.move#2': 'links.move',
  'Routes.list#0': 'routes.list',
  'Routes.add#0': 'route',
  'Routes.replace#0': 'route',
  'Routes.delete#0': 'route',
  'Addresses.list#0': 'addresses.list',
  'Addresses.add#0': 'address',
  'Addresses.replace#0': 'address',
  'Addresses.delete#0': 'addresses.delete',
  'Neighbours.list#0': 'neighbours.list',
  'Neighbours.add#0': 'neighbour',
  'Neighbours.replace#0': 'neighbour',
  'Neighbours.delete#0': 'neighbours.delete',
  'Nsids.get#0': 'nsids.get',
  'Nsids.set#0': 'nsids.set',
  'Nsids.list#0': 'nsids.list',
  'Qdiscs.list#0': 'qdiscs.list',
  'Qdiscs.delete#0': 'qdiscs.delete',
  'Classes.list#0': 'classes.list',
  'Classes.add#0': 'class',
  'Classes.replace#0': 'class',
  'Classes.change#0': 'class',
  'Classes.delete#0': 'classes.delete',
  'Filters.list#0': 'filters.list',
  'Filters.delete#0': 'filters.delete',
};

/** Parameters whose spec is a union by `kind`, each kind with its own keys: the per-kind table and the function giving a kind's keys. */
const BY_KIND: Record<string, [Readonly<Record<string, readonly string[]>>, (kind: unknown) => readonly string[] | undefined]> = {
  'Links.add#0': [LINK_KIND_KEYS, linkSpecKeys],
  'Qdiscs.add#0': [QDISC_KIND_KEYS, qdiscSpecKeys],
  'Qdiscs.replace#0': [QDISC_KIND_KEYS, qdiscSpecKeys],
  'Qdiscs.change#0': [QDISC_KIND_KEYS, qdiscSpecKeys],
  'Filters.add#0': [FILTER_KIND_KEYS, filterSpecKeys],
};

describe('netlink spec keys equal their types', () => {
  const parameters = publicParameters();
  const withObjects = [...parameters].filter(([, type]) => objectShapes(type).length > 0).map(([name]) => name);

  it('every public method parameter that takes an object has its list (links.add, qdiscs.add, filters.add: per kind)', () => {
    expect(withObjects.sort()).toEqual([...Object.keys(LISTS), ...Object.keys(BY_KIND)].sort());
  });

  for (const [parameter, list] of Object.entries(LISTS)) {
    it(`${parameter}: ${list}`, () => {
      const [shape, ...more] = objectShapes(parameters.get(parameter)!);
      expect(more).toEqual([]);
      expect(sorted(SPEC_KEYS[list])).toEqual(keysOf(shape!));
    });
  }

  for (const [parameter, [table, keysOfKind]] of Object.entries(BY_KIND)) {
    it(`${parameter}: each kind, its own keys and the common ones`, () => {
      const byKind = new Map<string, string[]>();
      for (const shape of objectShapes(parameters.get(parameter)!)) {
        const kind = propertyType(shape, 'kind');
        expect(kind.isStringLiteral()).toBe(true);
        byKind.set((kind as ts.StringLiteralType).value, keysOf(shape));
      }
      expect([...byKind.keys()].sort()).toEqual(Object.keys(table).sort());
      for (const [kind, keys] of byKind) expect(sorted(keysOfKind(kind)), kind).toEqual(keys);
    });
  }

  it('links.add: the veth peer', () => {
    const veth = objectShapes(parameters.get('Links.add#0')!).find((shape) => (propertyType(shape, 'kind') as ts.StringLiteralType).value === 'veth')!;
    expect(sorted(SPEC_KEYS['links.add veth peer'])).toEqual(keysOf(propertyType(veth, 'peer')));
  });

  it('a route next hop (RouteSpec.multipath[i])', () => {
    const [shape] = objectShapes(parameters.get('Routes.add#0')!);
    const [hop] = checker.getTypeArguments(propertyType(shape!, 'multipath') as ts.TypeReference);
    expect(sorted(SPEC_KEYS['next hop'])).toEqual(keysOf(hop!));
  });

  it('a u32 filter match (U32FilterSpec.match)', () => {
    const u32 = objectShapes(parameters.get('Filters.add#0')!).find((shape) => (propertyType(shape, 'kind') as ts.StringLiteralType).value === 'u32')!;
    expect(sorted(SPEC_KEYS['u32 match'])).toEqual(keysOf(propertyType(u32, 'match')));
  });

  it('every runtime list is checked above', () => {
    expect(Object.keys(SPEC_KEYS).sort()).toEqual([...new Set([...Object.values(LISTS), 'links.add veth peer', 'next hop', 'u32 match'])].sort());
  });
});

// Every spec object the documentation passes to a netlink method (README.md,
// docs/*.md code blocks, examples/**/*.mjs) uses only keys the method takes,
// so no documented call is refused as having an unknown key. The calls are
// found with the TypeScript parser: `<anything>.links.add({...})` and the like.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { linkSpecKeys, SPEC_KEYS } from '../../dist/netlink/keys.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The code of each document: a script whole, a markdown file's js/ts/mjs blocks. */
function documents(): { name: string; code: string }[] {
  const markdown = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const blocks = markdown.flatMap((name) =>
    [...readFileSync(join(root, name), 'utf8').matchAll(/```(?:js|ts|mjs|javascript|typescript)\n([\s\S]*?)```/g)].map((m) => ({ name, code: m[1]! })),
  );
  const scripts = readdirSync(join(root, 'examples'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => ({ name: `examples/${f}`, code: readFileSync(join(root, 'examples', f), 'utf8') }));
  return [...blocks, ...scripts];
}

/** The list an argument of `group.method` is checked against, by argument position. */
const ARGUMENTS: Record<string, Record<number, readonly string[] | 'link spec'>> = {
  'links.add': { 0: 'link spec' },
  'links.set': { 1: SPEC_KEYS['links.set'] },
  'links.move': { 2: SPEC_KEYS['links.move'] },
  'routes.add': { 0: SPEC_KEYS.route },
  'routes.replace': { 0: SPEC_KEYS.route },
  'routes.delete': { 0: SPEC_KEYS.route },
  'routes.list': { 0: SPEC_KEYS['routes.list'] },
  'addresses.add': { 0: SPEC_KEYS.address },
  'addresses.replace': { 0: SPEC_KEYS.address },
  'addresses.delete': { 0: SPEC_KEYS['addresses.delete'] },
  'addresses.list': { 0: SPEC_KEYS['addresses.list'] },
  'neighbours.add': { 0: SPEC_KEYS.neighbour },
  'neighbours.replace': { 0: SPEC_KEYS.neighbour },
  'neighbours.delete': { 0: SPEC_KEYS['neighbours.delete'] },
  'neighbours.list': { 0: SPEC_KEYS['neighbours.list'] },
  'nsids.get': { 0: SPEC_KEYS['nsids.get'] },
  'nsids.set': { 0: SPEC_KEYS['nsids.set'] },
  'nsids.list': { 0: SPEC_KEYS['nsids.list'] },
};

interface Found {
  call: string;
  unknown: string[];
}

const names = (object: ts.ObjectLiteralExpression): string[] =>
  object.properties.flatMap((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : []));

const property = (object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined => {
  const found = object.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText() === name);
  return found && ts.isPropertyAssignment(found) ? found.initializer : undefined;
};

/** The keys of a literal not in `known`, with those of a veth peer and next hops. */
function unknownKeys(object: ts.ObjectLiteralExpression, list: readonly string[] | 'link spec', call: string): string[] {
  const unknown = (o: ts.ObjectLiteralExpression, known: readonly string[]): string[] => names(o).filter((k) => !known.includes(k));
  if (list === 'link spec') {
    const kind = property(object, 'kind');
    const known = kind && ts.isStringLiteral(kind) ? linkSpecKeys(kind.text) : undefined;
    if (!known) return [`kind not a literal in ${call}`];
    const peer = property(object, 'peer');
    return [...unknown(object, known), ...(peer && ts.isObjectLiteralExpression(peer) ? unknown(peer, SPEC_KEYS['links.add veth peer']) : [])];
  }
  const hops = property(object, 'multipath');
  const hopLiterals = hops && ts.isArrayLiteralExpression(hops) ? hops.elements.filter(ts.isObjectLiteralExpression) : [];
  return [...unknown(object, list), ...hopLiterals.flatMap((hop) => unknown(hop, SPEC_KEYS['next hop']))];
}

function documentedCalls(): Found[] {
  const found: Found[] = [];
  for (const { name, code } of documents()) {
    const source = ts.createSourceFile(name, code, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ts.isPropertyAccessExpression(node.expression.expression)) {
        const method = `${node.expression.expression.name.text}.${node.expression.name.text}`;
        const lists = ARGUMENTS[method];
        node.arguments.forEach((argument, i) => {
          const list = lists?.[i];
          if (list && ts.isObjectLiteralExpression(argument)) found.push({ call: `${name}: ${node.getText().split('\n')[0]}`, unknown: unknownKeys(argument, list, method) });
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('documented netlink specs', () => {
  const calls = documentedCalls();

  it('finds the documented calls (README, docs/netlink.md, examples)', () => {
    expect(calls.length).toBeGreaterThanOrEqual(15);
    expect(calls.map((c) => c.call).join('\n')).toMatch(/docs\/netlink\.md: .*nl\.links\.add\(\{ kind: 'veth'/);
  });

  it('use only keys their methods take', () => {
    expect(calls.filter((c) => c.unknown.length > 0)).toEqual([]);
  });
});

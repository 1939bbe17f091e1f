// A lab declared in a file (loadLabFile, what `netns lab up FILE` reads):
// JSON or YAML by extension, the name from the file's own `name` or else its
// file name, and each refusal a coded error naming the file: an unknown
// extension, text that does not parse (a key given twice included, which
// JSON.parse alone would take), an object missing, a bad name. The CLI's
// root test runs the bundled copy, which no mutant reaches; this runs it here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadLabFile } from '../../dist/testing/lab/file.js';

const dir = mkdtempSync(join(tmpdir(), 'netns-lab-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const refused = (message: string | RegExp) => expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: typeof message === 'string' ? message : expect.stringMatching(message) });

describe('loadLabFile', () => {
  it('reads JSON and YAML alike, naming the lab by its name or else its file name', () => {
    const spec = { hosts: { h1: {}, h2: {} }, links: [['h1', 'h2']] };
    expect(loadLabFile(file('pair.json', JSON.stringify(spec)))).toEqual({ name: 'pair', spec });
    expect(loadLabFile(file('pair.yaml', 'name: two\nhosts: { h1: {}, h2: {} }\nlinks: [[h1, h2]]\n'))).toEqual({ name: 'two', spec });
    expect(loadLabFile(file('pair-3.yml', 'hosts: { h1: {}, h2: {} }\nlinks:\n  - [h1, h2]\n'))).toEqual({ name: 'pair-3', spec });
  });

  it('reads YAML as plain data (its core schema): no tags that make objects or code', () => {
    expect(() => loadLabFile(file('tag.yaml', 'hosts: !!js/function "function () {}"\n'))).toThrow(refused(/^lab file .*tag\.yaml: Unresolved tag: tag:yaml\.org,2002:js\/function/));
    expect(() => loadLabFile(file('local.yaml', 'hosts: !mine { h1: {} }\n'))).toThrow(refused(/^lab file .*local\.yaml: Unresolved tag: !mine/));
    expect(loadLabFile(file('numbers.yaml', 'hosts: { h1: { mtu: 1400 } }\n')).spec).toEqual({ hosts: { h1: { mtu: 1400 } } });
  });

  it('refuses another extension, text that does not parse and a key given twice, naming the file', () => {
    expect(() => loadLabFile(join(dir, 'lab.txt'))).toThrow(refused(`lab file ${join(dir, 'lab.txt')}: name it .json, .yaml or .yml`));
    expect(() => loadLabFile(file('broken.json', '{ "hosts": '))).toThrow(refused(new RegExp(`^lab file ${join(dir, 'broken.json')}: `)));
    expect(() => loadLabFile(file('dup.json', '{ "hosts": { "a": {} }, "hosts": { "b": {} } }'))).toThrow(refused(/dup\.json: .*unique/));
    expect(() => loadLabFile(file('dup.yaml', 'hosts: {}\nhosts: {}\n'))).toThrow(refused(/dup\.yaml: .*unique/));
  });

  it('refuses a file that holds no object, or names the lab badly', () => {
    for (const [name, text, got] of [['list.json', '[]', 'an array'], ['text.yaml', 'just text\n', 'string'], ['empty.yaml', '', 'null']] as const) {
      const path = file(name, text);
      expect(() => loadLabFile(path), name).toThrow(refused(`lab file ${path} must hold an object (hosts, links, ...), got ${got}`));
    }
    for (const [name, bad] of [['spaced.json', 'my lab'], ['number.json', 7], ['long.json', 'x'.repeat(33)]] as const) {
      const path = file(name, JSON.stringify({ name: bad, hosts: {} }));
      expect(() => loadLabFile(path), name).toThrow(refused(`lab file ${path}: name must match /^[A-Za-z0-9_-]{1,32}$/, got ${JSON.stringify(bad)}`));
    }
    const path = file('bad name.json', '{ "hosts": {} }');
    expect(() => loadLabFile(path)).toThrow(refused(`lab file ${path}: name must match /^[A-Za-z0-9_-]{1,32}$/, got "bad name"`));
  });

  it('refuses an alias bomb, and keeps a __proto__ key as a plain key, not the spec\'s prototype', () => {
    let bomb = 'a: &a [x, x, x, x, x, x, x, x, x]\n';
    for (const [name, prev] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e'], ['g', 'f']]) bomb += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]\n`;
    expect(() => loadLabFile(file('bomb.yaml', `${bomb}hosts: {}\n`))).toThrow(refused(/^lab file .*bomb\.yaml: Excessive alias count/));
    for (const [name, text] of [['proto.yaml', '__proto__: { hosts: { h1: {} } }\n'], ['proto.json', '{ "__proto__": { "hosts": { "h1": {} } } }']] as const) {
      const { spec } = loadLabFile(file(name, text));
      expect(Object.getPrototypeOf(spec), name).toBe(Object.prototype);
      expect(Object.hasOwn(spec, '__proto__'), name).toBe(true);
      expect((spec as { hosts?: unknown }).hosts, name).toBeUndefined();
    }
  });

  it('refuses a key given twice in JSON however it is escaped', () => {
    expect(() => loadLabFile(file('escaped.json', '{ "hosts": { "a": {} }, "ho\\u0073ts": { "b": {} } }'))).toThrow(refused(/escaped\.json: .*unique/));
  });

  it('passes on a file it cannot read as Node reports it', () => {
    expect(() => loadLabFile(join(dir, 'missing.yaml'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

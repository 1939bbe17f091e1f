// The README's code blocks, and the runnable ones of docs/, are files in
// examples/readme/ (run by test/root/readme-examples.test.ts); this checks that
// each block is its file, byte for byte, that each file is shown exactly once,
// that every other block in the docs says why it is not run, that every error
// code is documented, and that links lead somewhere.
//
// After editing an example:
//   README_SYNC=1 node scripts/test-isolated.mjs run test/unit/readme.test.ts
// rewrites the blocks of the README and docs/ from the files.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../dist/index.js';
import { ErrorCodes as AddrsetErrorCodes } from '../../dist/addrset/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = join(root, 'README.md');
const EXAMPLES = join(root, 'examples', 'readme');
const DOCS = join(root, 'docs');

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  /** The comment on the line just above the fence, if any. */
  marker: string | undefined;
  /** Offsets of the body in the text, for rewriting. */
  start: number;
  end: number;
}

/** Fenced blocks of a Markdown text, with the HTML comment right above each. */
function codeBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```([^\n`]*)\n/gm;
  let match: RegExpExecArray | null;
  while ((match = fence.exec(text)) !== null) {
    const start = match.index + match[0].length;
    const close = text.indexOf('\n```', start - 1);
    if (close < 0) throw new Error(`unclosed fence at offset ${match.index}`);
    const end = close + 1;
    const before = text.slice(0, match.index).replace(/\n$/, '');
    const previous = before.slice(before.lastIndexOf('\n') + 1);
    const marker = /^<!--\s*(.*?)\s*-->$/.exec(previous)?.[1];
    blocks.push({
      line: text.slice(0, match.index).split('\n').length,
      lang: match[1]!.trim(),
      body: text.slice(start, end),
      marker,
      start,
      end,
    });
    fence.lastIndex = end + 3;
  }
  return blocks;
}

const exampleOf = (block: Block): string | undefined => /^example: (\S+)$/.exec(block.marker ?? '')?.[1];
const LANG_OF: Record<string, string> = { '.mjs': 'js', '.sh': 'sh', '.yaml': 'yaml' };

function docFiles(): string[] {
  const docs = existsSync(DOCS) ? readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f)) : [];
  return [README, ...docs];
}

if (process.env.README_SYNC) {
  for (const path of docFiles()) {
    let text = readFileSync(path, 'utf8');
    for (const block of codeBlocks(text).reverse()) {
      const file = exampleOf(block);
      if (file) text = text.slice(0, block.start) + readFileSync(join(root, file), 'utf8') + text.slice(block.end);
    }
    writeFileSync(path, text);
  }
}

/** Where an example block is shown, and whether it is its file as it is (fence language included). */
function expectShownAsIs(block: Block, where: string): void {
  const file = exampleOf(block)!;
  expect(existsSync(join(root, file)), `${where}: ${file} does not exist`).toBe(true);
  expect(file.startsWith('examples/readme/'), `${where}: ${file} is not in examples/readme/`).toBe(true);
  expect(block.lang, `${where}: fence language for ${file}`).toBe(LANG_OF[file.slice(file.lastIndexOf('.'))]);
  expect(block.body, `${where} differs from ${file} (README_SYNC=1 rewrites it)`).toBe(readFileSync(join(root, file), 'utf8'));
}

describe('README code blocks', () => {
  const text = readFileSync(README, 'utf8');
  const blocks = codeBlocks(text);

  it('every block of the README is an example file, shown as it is', () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      const file = exampleOf(block);
      expect(file, `README.md:${block.line}: a block without <!-- example: examples/readme/FILE -->`).toBeDefined();
      expectShownAsIs(block, `README.md:${block.line}`);
    }
  });

  it('every file in examples/readme/ is shown once, in the README or a page of docs/', () => {
    const shown = docFiles()
      .flatMap((path) => codeBlocks(readFileSync(path, 'utf8')).map(exampleOf))
      .filter((file) => file !== undefined)
      .sort();
    const files = readdirSync(EXAMPLES)
      .filter((f) => Object.hasOwn(LANG_OF, f.slice(f.lastIndexOf('.'))))
      .map((f) => relative(root, join(EXAMPLES, f)))
      .sort();
    expect(shown).toEqual(files);
  });

  it('examples make only nsdoc- namespaces and say so', () => {
    for (const file of readdirSync(EXAMPLES)) {
      const source = readFileSync(join(EXAMPLES, file), 'utf8');
      for (const name of source.matchAll(/ns[a-z]*-\$\{?[a-z.$]+/g)) expect(name[0], file).toMatch(/^nsdoc-/);
    }
  });

  it('blocks elsewhere in docs/ are examples or say why they are not run', () => {
    for (const path of docFiles().slice(1)) {
      for (const block of codeBlocks(readFileSync(path, 'utf8'))) {
        const where = `${relative(root, path)}:${block.line}`;
        if (exampleOf(block)) expectShownAsIs(block, where);
        else expect(block.marker ?? '', `${where}: mark it <!-- not run: why -->`).toMatch(/^not run: \S/);
      }
    }
  });
});

describe('README content', () => {
  const text = readFileSync(README, 'utf8');

  it('stays short: details live in docs/', () => {
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(390);
  });

  it('says how to install it today: a tarball or git, with no registry release to point at', () => {
    expect(text).toContain('There is no release on the npm registry');
    expect(text).toMatch(/`npm install \.\/netns-[\d.]+\.tgz`/);
    expect(text).toContain('`npm install git+https://');
    expect(text).not.toMatch(/`npm (install|i) netns`(?! does not)/);
  });

  it('examples plumb over netlink: no README example runs `ip`', () => {
    for (const block of codeBlocks(text)) {
      expect(block.body, `README.md:${block.line}`).not.toMatch(/\b(spawn|execFile|execFileSync|exec)\(\s*'ip'/);
    }
  });

  it('lists every error code, and ErrorCodes is the same object in netns and netns/addrset', () => {
    expect(AddrsetErrorCodes).toBe(ErrorCodes);
    const missing = Object.values(ErrorCodes).filter((code) => !text.includes(`\`${code}\``));
    expect(missing).toEqual([]);
    expect(text).toContain("code: 'ABORT_ERR'");
    expect(text).toContain('NETNS_RESTORE_FAILED');
  });

  it('relative links in README and docs/ lead to files (and headings) that exist', () => {
    // GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes.
    const anchors = (file: string): string[] =>
      [...readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '').matchAll(/^#+ (.*)$/gm)].map(([, title]) =>
        title!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-'),
      );
    for (const path of docFiles()) {
      const doc = readFileSync(path, 'utf8');
      for (const [, target] of doc.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const linked = file === '' ? path : join(dirname(path), file);
        expect(existsSync(linked), `${relative(root, path)} links to ${target}`).toBe(true);
        if (anchor !== undefined) expect(anchors(linked), `${relative(root, path)} links to ${target}`).toContain(anchor);
      }
    }
  });

  it('ships an MIT LICENSE, as package.json says', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the netns authors\n/);
  });
});

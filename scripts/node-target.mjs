// esbuild's target for the package's own bundles: the oldest Node.js that
// package.json's engines admits (its lowest version number), so a bundle
// never uses syntax an engine it claims cannot parse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function nodeTarget(root) {
  const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const versions = [...engines.node.matchAll(/\d+(?:\.\d+){0,2}/g)].map(([text]) => text);
  const key = (text) => text.split('.').map(Number);
  const oldest = versions.reduce((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0) ? a : b;
    return a;
  });
  return `node${oldest}`;
}

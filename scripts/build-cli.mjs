#!/usr/bin/env node
// Builds the `netns` command as the package ships it: dist/cli/netns.cjs (the
// entry and the verbs of ip netns) and dist/cli/netns-tools.cjs (addrset,
// demo, runtime, and commander, which parses them), each one CommonJS file.
// A command is a new process per call, and Node 20 takes longer to start an
// ES module graph (the loader, then about a millisecond a file) than to read
// one CommonJS file; issue 15 asks a call to cost at most 1.5x `node -e 0`,
// so the verbs' file carries none of the tools' code (V8 scans every byte of
// a script it loads). Modules stay lazy inside each file: a verb's code runs
// only when that verb is called. Whitespace and comments go; names stay, for
// readable stack traces.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeTarget } from './node-target.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'src', 'cli');

// main.ts and help.ts load tools.ts on demand: in the shipped form, that is the other file.
const toolsApart = {
  name: 'tools-apart',
  setup(builder) {
    builder.onResolve({ filter: /^\.\/tools\.js$/ }, (args) => (args.importer.startsWith(cli) ? { path: './netns-tools.cjs', external: true } : undefined));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: nodeTarget(root),
  // The files sit in dist/cli as dist/core/*.js sit in dist/core, so the package's
  // runtime files (addon, exec helper, worker) are found from their URL as from those.
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  // import() of the other file as require(): a real import() would start the ES module loader,
  // which scans the whole CommonJS file for its exports first.
  supported: { 'dynamic-import': false },
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: false,
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, entryPoints: [join(cli, 'main.ts')], outfile: join(root, 'dist', 'cli', 'netns.cjs'), plugins: [toolsApart] }),
  build({ ...common, entryPoints: [join(cli, 'tools.ts')], outfile: join(root, 'dist', 'cli', 'netns-tools.cjs') }),
]);

// Start-up cost (issue 14): how much importing netns and netns/cni adds to a
// bare `node -e 0`, and what a minimal plugin answering VERSION costs. A CNI
// plugin is a new process per command, so this is paid on every one. Wall
// time of the whole process, medians, all variants taking turns.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, nowUs, record, scratchFile } from './lib.js';

const RUNS = 30;
const GOAL_MS = 15; // issue 14: import('netns') plus netns/cni adds at most this over `node -e 0`

const repo = fileURLToPath(new URL('..', import.meta.url));
const distUrl = (file) => new URL(`../dist/${file}`, import.meta.url).href;

// What a plugin built on netns starts with: pluginMain, and the package its ADD would use.
const PLUGIN = `
import { pluginMain } from ${JSON.stringify(distUrl('cni/index.js'))};
import ${JSON.stringify(distUrl('index.js'))};
const unused = () => { throw new Error('only VERSION is measured'); };
await pluginMain({ add: unused, del: unused, check: unused }, { versions: ['1.0.0', '1.1.0'] });
`;

// `node -e` runs from the repository, where 'netns' names this package (self-reference).
function variants(plugin) {
  const evaluate = (script) => [`node -e "${script}"`, { argv: ['-e', script] }];
  return [
    evaluate('0'),
    evaluate("await import('netns')"),
    evaluate("await import('netns/cni')"),
    evaluate("await import('netns'); await import('netns/cni')"),
    [
      'node version-plugin.mjs (CNI_COMMAND=VERSION)',
      { argv: [plugin], env: { ...process.env, CNI_COMMAND: 'VERSION' }, input: '{"cniVersion":"1.0.0"}' },
    ],
  ];
}

function runOnceUs({ argv, env, input }) {
  const start = nowUs();
  const result = spawnSync(process.execPath, argv, { cwd: repo, env, input, stdio: ['pipe', 'ignore', 'pipe'] });
  const elapsed = nowUs() - start;
  if (result.status !== 0) throw new Error(`node ${argv.join(' ')} failed: ${result.stderr}`);
  return elapsed;
}

export function benchStartup() {
  const cases = variants(scratchFile('version-plugin.mjs', PLUGIN));
  const times = new Map(cases.map(([name]) => [name, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [name, spec] of cases) times.get(name).push(runOnceUs(spec) / 1000);
  }
  const [[baseName], ...measured] = cases;
  const base = median(times.get(baseName));
  record('startup', `${baseName} (wall, median of ${RUNS})`, base, 'ms');
  for (const [name] of measured) {
    const ours = median(times.get(name));
    record('startup', name, ours, 'ms', `${baseName}, same run`, base);
    record('startup', `  the same, minus ${baseName}`, ours - base, 'ms', 'goal (issue 14)', GOAL_MS);
  }
}

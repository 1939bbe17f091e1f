// `netns cni check PLUGIN --conf FILE`: the conformance and stress runner of
// netns/cni/testing against any plugin executable, its table on stdout
// (exit 1 when a scenario failed, 126 when the plugin cannot be started; a
// stop signal deletes what the run made, then ends it by that signal).
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ErrorCodes, type NetnsError } from '../core/errors.js';
import { printResult, usageError } from './output.js';
import { abortOnStopSignals } from './stop-signals.js';

interface CheckFlags {
  conf: string;
  path?: string;
  parallel?: string;
  rounds?: string;
  only?: string;
  timeout?: string;
  markdown?: boolean;
  json?: boolean;
}

function wholeNumber(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw usageError(`${flag} takes a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

function readConf(file: string): Record<string, unknown> {
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw usageError(`--conf ${file} is not JSON: ${(error as Error).message}`);
  }
}

/** The status of a run whose plugin cannot be started at all, as a shell's for a command it found but cannot execute. */
const EXIT_CANNOT_RUN = 126;

function timeoutMs(text: string | undefined): number | undefined {
  const seconds = wholeNumber(text, '--timeout');
  if (seconds === 0) throw usageError('--timeout takes a whole number of seconds from 1');
  return seconds === undefined ? undefined : seconds * 1000;
}

async function check(plugin: string, flags: CheckFlags): Promise<void> {
  const { checkPlugin, formatReport } = await import('../cni/testing/conformance/index.js');
  const options = {
    plugin,
    conf: readConf(flags.conf),
    path: flags.path?.split(':').filter(Boolean),
    parallel: wholeNumber(flags.parallel, '--parallel'),
    rounds: wholeNumber(flags.rounds, '--rounds'),
    only: flags.only?.split(',') as never,
    timeoutMs: timeoutMs(flags.timeout),
  };
  // a stop signal aborts the run, which kills its plugins and deletes what it made; done() then dies by it
  const stop = abortOnStopSignals();
  let rows: Awaited<ReturnType<typeof checkPlugin>>;
  try {
    rows = await checkPlugin({ ...options, signal: stop.signal });
  } catch (error) {
    if (stop.signal.aborted) return;
    if ((error as NetnsError).code !== ErrorCodes.CNI_PLUGIN_UNRUNNABLE) throw error;
    process.stderr.write(`netns cni check: ${(error as NetnsError).message}\n`);
    process.exitCode = EXIT_CANNOT_RUN;
    return;
  } finally {
    stop.done();
  }
  printResult(rows, Boolean(flags.json), () => [formatReport(rows, { markdown: flags.markdown })]);
  if (rows.some((row) => row.result === 'FAIL')) process.exitCode = 1;
}

export function addCniCommands(program: Command): void {
  const cni = program.command('cni').description('tools for CNI plugin authors');
  cni
    .command('check')
    .description('put a CNI plugin through the spec\'s error cases, DEL after the namespace is gone, parallel ADDs and DELs, killed and abandoned ADDs, with a leak check after each (as root, in namespaces of its own)')
    .argument('<plugin>', 'the plugin executable')
    .requiredOption('--conf <file>', 'its network configuration (JSON, one plugin, with cniVersion; name is replaced)')
    .option('--path <dirs>', 'CNI_PATH directories before the plugin\'s own, /opt/cni/bin and /usr/lib/cni (colon-separated)')
    .option('--parallel <n>', 'attachments in the parallel scenario', '10')
    .option('--rounds <n>', 'rounds of the killed-ADD scenario', '10')
    .option('--only <names>', 'only these scenarios (comma-separated)')
    .option('--timeout <seconds>', 'each plugin call\'s deadline: then its process group is killed and the call fails', '30')
    .option('--markdown', 'print the table as Markdown')
    .option('--json', 'print JSON')
    .action(check);
}

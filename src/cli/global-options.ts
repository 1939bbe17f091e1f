// The options that come before the verb, read as `ip` reads its own: a
// leading '-' or '--', any unambiguous prefix (-j, -json, --json), and an
// unknown one refused with ip's message and status.
import { checkRunDir } from '../core/names.js';
import { IpFailure } from './ip/failure.js';

export interface GlobalOptions {
  json: boolean;
  pretty: boolean;
  all: boolean;
  version: boolean;
  help: boolean;
  /** Where named namespaces live; ours (ip's is fixed at build time). */
  runDir: string;
}

export const DEFAULT_RUN_DIR = '/run/netns';

type Flag = 'json' | 'pretty' | 'all' | 'version' | 'help';

// In the order ip tries them, so a short prefix means what it means to ip.
const FLAGS: [string, Flag][] = [
  ['-Version', 'version'],
  ['-version', 'version'], // --version, as every other CLI spells it
  ['-json', 'json'],
  ['-pretty', 'pretty'],
  ['-help', 'help'],
  ['-all', 'all'],
];

/** ip's matches(): `given` is a non-empty prefix of `word`. */
export function matches(given: string, word: string): boolean {
  return given.length > 0 && word.startsWith(given);
}

/** The global options and what follows them (the verb and its arguments). */
export function parseGlobalOptions(argv: readonly string[]): { options: GlobalOptions; rest: string[] } {
  const options: GlobalOptions = { json: false, pretty: false, all: false, version: false, help: false, runDir: DEFAULT_RUN_DIR };
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith('-') && argv[i] !== '-'; i++) {
    const given = argv[i]!;
    if (given === '--') {
      i++;
      break;
    }
    const option = given.startsWith('--') ? given.slice(1) : given;
    if (option === '-run-dir' || option.startsWith('-run-dir=')) {
      const [value, used] = option.includes('=') ? [option.slice('-run-dir='.length), 0] : [argv[i + 1], 1];
      if (value === undefined || value === '') throw new IpFailure(255, `Option "${given}" needs a directory`);
      options.runDir = runDirOption(value);
      i += used;
      continue;
    }
    const flag = FLAGS.find(([word]) => matches(option, word) && option.length > 1);
    if (!flag) throw new IpFailure(255, `Option "${given}" is unknown, try "netns help".`);
    options[flag[1]] = true;
  }
  return { options, rest: argv.slice(i) };
}

/** As the library takes it (absolute, trailing slashes dropped), so messages name the paths it uses. */
function runDirOption(value: string): string {
  try {
    return checkRunDir(value);
  } catch (error) {
    throw new IpFailure(255, `Option "--run-dir" needs an absolute directory, not ${JSON.stringify(value)}`, { cause: error });
  }
}

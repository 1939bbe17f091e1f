// `netns VERB ...` for the verbs of `ip netns`: the verb found as ip finds it
// (any prefix, in ip's order: `netns l` lists, `netns d` deletes), its module
// loaded only then, so a call pays for what its verb needs and no more.
import { matches } from '../global-options.js';
import type { IpContext, Verb } from './context.js';
import { invalidNameFailure } from './failure.js';

const NAME_MAX = 255;

type Loader = () => Promise<Verb>;

// ip/ipnetns.c do_netns, in its order; help is not here (ours prints our help).
const VERBS: [words: string[], load: Loader][] = [
  [['list', 'show', 'lst'], async () => (await import('./list.js')).list],
  [['list-id'], async () => (await import('./list-id.js')).listId],
  [['add'], async () => (await import('./add.js')).add],
  [['set'], async () => (await import('./set.js')).set],
  [['delete'], async () => (await import('./delete.js')).remove],
  [['identify'], async () => (await import('./lookup.js')).identify],
  [['pids'], async () => (await import('./lookup.js')).pids],
  [['exec'], async () => (await import('./exec.js')).exec],
  [['monitor'], async () => (await import('./monitor.js')).monitor],
  [['attach'], async () => (await import('./add.js')).attach],
];

/** The verb `word` names, as ip would take it; undefined if none. */
export function findVerb(word: string): Loader | undefined {
  return VERBS.find(([words]) => words.some((verb) => matches(word, verb)))?.[1];
}

/** ip's invalid_name(): the one check ip makes of every verb's first argument. */
function invalidName(name: string): boolean {
  return name === '' || Buffer.byteLength(name) > NAME_MAX || name.includes('/') || name === '.' || name === '..';
}

export async function runVerb(load: Loader, args: string[], context: IpContext): Promise<number> {
  if (!context.all && args.length > 0 && invalidName(args[0]!)) throw invalidNameFailure(args[0]!);
  return (await load())(args, context);
}

// What the demo needs before it starts. Missing privileges stop it at once,
// with a message saying how to run it; a missing `nft` only skips the steps
// that need it, reported once with its coded error (naming the package). `ip`
// is not needed: links, addresses and lo are made over netlink.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { nftMissing } from '../addrset/nft-backend.js';
import { hasEffectiveCapability } from '../capabilities.js';
import type { NetnsError } from '../core/errors.js';

export type Tool = 'nft';

/** Whether `command` is an executable file on PATH (as execvp would find it). */
export function onPath(command: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    const file = join(dir || '.', command);
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

export interface Preflight {
  /** Problems that stop the demo, each with what to do about it. */
  problems: string[];
  /** Tools that are missing, each with its coded error. */
  missing: Map<Tool, NetnsError>;
}

export function preflight(): Preflight {
  const problems: string[] = [];
  for (const name of ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN'] as const) {
    if (!hasEffectiveCapability(name)) problems.push(`${name} is missing: run it as root, e.g. \`sudo npm start\``);
  }
  const missing = new Map<Tool, NetnsError>();
  if (!onPath('nft')) missing.set('nft', nftMissing());
  return { problems, missing };
}

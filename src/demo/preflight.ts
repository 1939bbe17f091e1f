// What the demo needs before it starts, so that it can refuse at once with a
// message that says what is missing and how to run it.
import { execFileSync } from 'node:child_process';
import { hasEffectiveCapability } from '../capabilities.js';

function hasCommand(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Problems that stop the demo, each with what to do about it; empty when all is well. */
export function preflight(): string[] {
  const problems: string[] = [];
  for (const name of ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN'] as const) {
    if (!hasEffectiveCapability(name)) problems.push(`${name} is missing: run it as root, e.g. \`sudo npm start\``);
  }
  if (!hasCommand('ip', ['-V'])) problems.push('`ip` is missing: install iproute2 (apt-get install iproute2)');
  if (!hasCommand('nft', ['--version'])) problems.push('`nft` is missing: install nftables (apt-get install nftables)');
  return problems;
}

// `netns sandbox [--] command...`: the command as root of a rootless sandbox
// (see src/sandbox/spawn-sandbox.ts), with the CLI's stdio, signals passed on
// and the CLI ending as the command ended, as `netns exec` does.
import type { Command } from 'commander';

async function sandbox(command: string[]): Promise<void> {
  const { spawnSandbox } = await import('../sandbox/spawn-sandbox.js');
  const { forwardUntilExit } = await import('./exec-in.js');
  const { exitLikeChild } = await import('./signal-forwarding.js');
  // commander has taken the `--` that ends our options (a second one is the command's), and refuses no command
  const [program, ...args] = command as [string, ...string[]];
  const { code, signal } = await forwardUntilExit(() => spawnSandbox(program, args, { stdio: 'inherit', parentDeathSignal: 'SIGKILL' }));
  exitLikeChild(code, signal);
}

export function addSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description(
      'run a command without root as root of a new user, mount and network namespace: a private /run/netns, lo up; ' +
        'ip netns, netns lab, nft and the tests work inside, nothing changes outside',
    )
    .argument('<command...>', 'the command and its arguments (after -- when they have options)')
    .passThroughOptions()
    .action(sandbox);
}

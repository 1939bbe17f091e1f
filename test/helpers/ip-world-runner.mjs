// Runs inside a mount and network namespace of its own (see ip-world.ts):
// lays a fresh tmpfs over /run/netns, then runs each shell command it is sent
// (one JSON line each on stdin) and answers with its status and output.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

const mounted = spawnSync('sh', ['-c', 'mkdir -p /run/netns && mount -t tmpfs -o mode=0755 netns-world /run/netns && ip link set lo up'], { encoding: 'utf8' });
if (mounted.status !== 0) {
  process.stderr.write(`ip-world: ${mounted.stderr}`);
  process.exit(1);
}

function run(shell, env) {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', shell], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const { id, shell, env } = JSON.parse(line);
  process.stdout.write(`${JSON.stringify({ id, ...(await run(shell, env)) })}\n`);
}

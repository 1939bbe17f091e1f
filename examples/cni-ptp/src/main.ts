#!/usr/bin/env node
// cni-ptp: a small point-to-point CNI plugin built on netns. A runtime runs
// it with CNI_* variables and the network configuration on stdin.
import { parseConfig } from './config.js';
import { addAttachment, checkAttachment, collectGarbage, deleteAttachment, status } from './ptp.js';
import { CniCodes, CniError, readInvocation, SUPPORTED_VERSIONS } from './protocol.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function versionOf(input: string): string {
  try {
    const version = (JSON.parse(input) as { cniVersion?: unknown }).cniVersion;
    return typeof version === 'string' ? version : '1.1.0';
  } catch {
    return '1.1.0';
  }
}

async function run(input: string): Promise<object | undefined> {
  const invocation = readInvocation(process.env);
  if (invocation.command === 'VERSION') return { cniVersion: versionOf(input), supportedVersions: SUPPORTED_VERSIONS };
  const config = parseConfig(input, invocation.command === 'ADD');
  switch (invocation.command) {
    case 'ADD':
      return addAttachment(invocation, config);
    case 'DEL':
      return deleteAttachment(invocation, config).then(() => undefined);
    case 'CHECK':
      return checkAttachment(invocation, config).then(() => undefined);
    case 'GC':
      return collectGarbage(config).then(() => undefined);
    case 'STATUS':
      return status(config).then(() => undefined);
  }
}

const input = await readStdin();
try {
  const result = await run(input);
  if (result) process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  const cniError = error instanceof CniError ? error : new CniError(CniCodes.IO_FAILURE, (error as Error).message ?? String(error));
  process.stdout.write(`${JSON.stringify(cniError.toJSON(versionOf(input)))}\n`);
  process.exitCode = 1;
}

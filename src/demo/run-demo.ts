// `npm start` / `netns demo`: the product doing its job on real namespaces it
// makes under a unique prefix and always removes (on success, failure and
// Ctrl-C). It only talks to addresses inside its own namespaces.
import http from 'node:http';
import net from 'node:net';
import { statSync } from 'node:fs';
import { AddressSets } from '../addrset/index.js';
import { ErrorCodes, netnsError } from '../core/errors.js';
import { listNamespaces } from '../lifecycle.js';
import { NetNS } from '../netns.js';
import { withNetNS } from '../run/with-netns.js';
import { createTestNetwork, type TestNetwork } from '../testing/network.js';
import { sweep } from '../testing/sweep.js';
import { codeAndMessage, Narrator } from './narrator.js';
import { preflight } from './preflight.js';
import { flushChain, referenceSet } from './set-rule.js';

const PREFIX = 'nsdemo-';
const TABLE = 'demo_policy';
const DELETE_DELAY_MS = 600;
/** The chain holding the rule that references a set. */
const CHAIN = 'uses';

type Hosts = 'red' | 'blue' | 'green';

export const DEMO_EXIT = { OK: 0, FAILED: 1, NOT_PRIVILEGED: 2 } as const;

/** A demo check that failed: the package did not do what the step shows. */
const checkFailed = (message: string) => netnsError(ErrorCodes.FIXTURE, `demo check failed: ${message}`);

function once<T>(sets: AddressSets, event: 'destroyed' | 'destroyFailed' | 'deleteCancelled'): Promise<T> {
  return new Promise((resolve) => sets.once(event, resolve as (value: unknown) => void));
}

function httpGetOver(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ createConnection: () => socket, path: '/', headers: { host: 'red' } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk) => (body += chunk)).on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

function connectFromHost(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected (something on the host uses this port too)');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

async function observeNamespaces(network: TestNetwork<Hosts>, note: (line: string) => void): Promise<void> {
  for (const [name, ns] of Object.entries(network.hosts) as [Hosts, NetNS][]) {
    const seen = await withNetNS(ns, () => {
      const fs = require('node:fs');
      const devices = (fs.readFileSync('/proc/thread-self/net/dev', 'utf8') as string).split('\n').slice(2).map((line) => line.split(':')[0]!.trim()).filter(Boolean);
      return { inode: fs.statSync('/proc/thread-self/ns/net').ino as number, devices };
    });
    if (seen.inode !== ns.inode) throw checkFailed(`withNetNS saw net:[${seen.inode}] instead of ${name}'s net:[${ns.inode}]`);
    note(`${name.padEnd(5)} net:[${seen.inode}]  interfaces: ${seen.devices.sort().join(', ')}`);
  }
  note(`main thread is still in net:[${statSync('/proc/thread-self/ns/net').ino}] (it never switches)`);
}

async function serveAcrossNamespaces(network: TestNetwork<Hosts>, note: (line: string) => void): Promise<http.Server> {
  const server = await network.hosts.red.listen(
    http.createServer((request, response) => response.end(`hello from red, ${request.socket.remoteAddress}`)),
    { host: '0.0.0.0', port: 0 },
  );
  const { port } = server.address() as net.AddressInfo;
  note(`http.Server made on the main thread, listening in red on 0.0.0.0:${port}`);
  const body = await httpGetOver(await network.hosts.blue.connect({ host: network.address('red'), port }));
  note(`blue → 10.77.1.1:${port}: "${body}"`);
  const fromHost = await connectFromHost(port);
  note(`host → 127.0.0.1:${port}: ${fromHost} (red's sockets live in red)`);
  if (!body.startsWith('hello from red')) throw checkFailed('blue did not reach red');
  return server;
}

async function ovnRace(sets: AddressSets, red: NetNS, note: (line: string) => void): Promise<void> {
  const ref = await sets.ensure('ns/frontend', ['10.77.1.2']);
  await referenceSet(red, { table: TABLE, chain: CHAIN, set: ref.v4 });
  note(`ensure('ns/frontend') → ${ref.v4}, referenced by a rule in red's ${TABLE} table (all over netlink: no nft)`);
  const cancelled = once(sets, 'deleteCancelled');
  await sets.delete('ns/frontend');
  const deadline = Date.now() + DELETE_DELAY_MS;
  note(`delete('ns/frontend') → emptied now, destroy due in ${DELETE_DELAY_MS} ms`);
  await sets.ensure('ns/frontend', ['10.77.1.2', '10.77.2.2']);
  await cancelled;
  note('ensure again inside the delay → deleteCancelled, same set name');
  await new Promise((resolve) => setTimeout(resolve, deadline - Date.now() + 150)); // let the old deadline pass
  const after = await sets.inspect('ns/frontend');
  if (after.state !== 'live' || after.v4.elements.length !== 2) throw checkFailed(`the old timer hurt the set: ${JSON.stringify(after)}`);
  note(`old deadline passed: ${after.v4.name} is ${after.state} with ${after.v4.elements.join(', ')} (ovn-kubernetes lost it here)`);
}

async function busyDestroy(sets: AddressSets, red: NetNS, note: (line: string) => void): Promise<void> {
  const failed = once<{ error: NodeJS.ErrnoException; retryInMs: number }>(sets, 'destroyFailed');
  await sets.delete('ns/frontend');
  const { error, retryInMs } = await failed;
  note(`destroy at the deadline: ${error.code} (a rule still uses the set) → kept, retry in ${retryInMs} ms`);
  const destroyed = once(sets, 'destroyed');
  await flushChain(red, { table: TABLE, chain: CHAIN });
  await destroyed;
  note('rule removed → the next retry destroyed the set');
}

// An agent that went away without cleaning up, then the one that takes over
// the table (one writer at a time: the old one must be gone first).
async function collectLeak(previous: AddressSets, red: NetNS, note: (line: string) => void): Promise<AddressSets> {
  await previous.close();
  const crashed = await AddressSets.open({ netns: red, table: TABLE });
  await crashed.ensure('ns/leaked', ['10.77.9.9']);
  await crashed.close();
  const sets = await AddressSets.open({ netns: red, table: TABLE });
  await sets.ensure('ns/backend', ['10.77.2.2']);
  note(`planted: ${(await sets.list()).map((row) => `${row.name} (${row.owner}, ${row.state})`).join(', ')}`);
  const report = await sets.gc({ live: ['ns/backend'] });
  note(`gc({ live: ['ns/backend'] }) removed ${report.removed.map((e) => e.name).join(', ')}; kept ${report.kept.map((e) => `${e.name} (${e.reason})`).join(', ')}`);
  if (!report.removed.some((e) => e.owner === 'ns/leaked')) throw checkFailed('gc did not collect the leaked set');
  return sets;
}

export async function runDemo({ json }: { json: boolean }): Promise<number> {
  const { problems } = preflight();
  if (problems.length > 0) {
    process.stderr.write(`netns: EPERM: the demo cannot run here:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return DEMO_EXIT.NOT_PRIVILEGED;
  }
  const narrator = new Narrator(json, !json && Boolean(process.stdout.isTTY));
  const started = performance.now();
  let network: TestNetwork<Hosts> | undefined;
  let sets: AddressSets | undefined;
  let server: http.Server | undefined;
  const cleanup = async () => {
    server?.close();
    await sets?.close();
    await network?.close();
  };
  const hosts = (): TestNetwork<Hosts> => network!;
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // The address sets' timers do not hold the process open (a library must not);
  // while the demo waits on them, this does.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  try {
    await sweep(PREFIX);
    narrator.say('netns demo: real namespaces, made here and removed at the end\n');
    // Over netlink (netns/testing): no `ip` process.
    await narrator.step('Three namespaces joined by veth pairs', async (note) => {
      network = await createTestNetwork<Hosts>({
        prefix: PREFIX,
        hosts: { red: { addr: '10.77.1.1/24' }, blue: { addr: '10.77.1.2/24' }, green: {} },
        links: [['red', 'blue'], ['red', 'green', { red: '10.77.2.1/24', green: '10.77.2.2/24' }]],
      });
      note('red 10.77.1.1 ⇄ blue 10.77.1.2 and red 10.77.2.1 ⇄ green 10.77.2.2');
    });
    await narrator.step('withNetNS runs JavaScript inside each namespace', (note) => observeNamespaces(hosts(), note));
    await narrator.step('A server made from the main thread in red, reached from blue, not from the host', async (note) => {
      server = await serveAcrossNamespaces(network!, note);
    });
    await narrator.step("Address sets: the ovn-kubernetes delete/re-create race, resolved", async (note) => {
      sets = await AddressSets.open({ netns: hosts().hosts.red, table: TABLE, deleteDelayMs: DELETE_DELAY_MS, retryIntervalMs: 100, maxRetryIntervalMs: 200 });
      await ovnRace(sets, hosts().hosts.red, note);
    });
    await narrator.step('A set still referenced by a rule waits (EBUSY), then goes', (note) => busyDestroy(sets!, hosts().hosts.red, note));
    await narrator.step('A leaked set is planted and collected by gc', async (note) => {
      sets = await collectLeak(sets!, hosts().hosts.red, note);
    });
    await narrator.step('Everything removed', async (note) => {
      // This run's own names: another demo may be running beside it.
      const made = new Set(network ? Object.values<string>(network.names) : []);
      await cleanup();
      const left = listNamespaces().filter((entry) => made.has(entry.name));
      if (left.length > 0) throw netnsError(ErrorCodes.FIXTURE, `left behind: ${left.map((e) => e.name).join(', ')}`);
      note('no namespace, veth, mount or set of the demo remains');
    });
    narrator.finish(true, performance.now() - started);
    return DEMO_EXIT.OK;
  } catch (error) {
    process.stderr.write(`netns: ${codeAndMessage(error)}\n`);
    await cleanup().catch(() => {});
    narrator.finish(false, performance.now() - started);
    return DEMO_EXIT.FAILED;
  } finally {
    clearInterval(keepAlive);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

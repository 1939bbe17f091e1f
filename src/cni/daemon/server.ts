// The resident daemon: one long-running process serving a plugin's handlers
// for every call a shim (native/cni_shim.c) forwards over a unix socket, many
// at once. Each call is handleCall's, with the environment and stdin the shim
// sent: nothing of one call (environment, result, failure) reaches another,
// and no failure of a call ends the daemon. An ADD whose shim goes away (gave
// up, killed) before the answer is cancelled through its signal (a DEL runs
// to its end), and calls of one attachment pass through a gate (gate.ts), so
// that a runtime's DEL is never overtaken by the ADD it gave up on. A call runs in its caller's
// network namespace (caller-netns.ts), not the daemon's.
import type { Server, Socket } from 'node:net';
import { fs, net } from '../../core/builtins.js';
import { ErrorCodes, fromNodeError, netnsError } from '../../core/errors.js';
import { own } from '../../core/own.js';
import { MAX_TIMER_MS } from '../../core/timer-limit.js';
import { native } from '../../core/native.js';
import { CniCode, CniError } from '../errors.js';
import { checkArguments, handleCall, type CallOutcome, type PluginFunctions, type PluginInfo } from '../skel.js';
import type { NetConf } from '../types.js';
import { CURRENT_VERSION } from '../version.js';
import type { NetNS } from '../../netns.js';
import { receiveOpening, type Opening } from './caller-netns.js';
import { checkSocketPath, defaultSocketPath, takeSocketPlace, type SocketPlace } from './place.js';
import { AttachmentGate, attachmentOf } from './gate.js';
import { BadRequest, encodeResponse, MAX_STDOUT, RequestReader, type Request } from './protocol.js';

/** What serveResident takes; give `socketPath`, or `name` for the default path. */
export interface ResidentOptions {
  /** Where to listen; default /run/netns-cni/NAME.sock, where the shim installed as NAME connects. */
  socketPath?: string;
  /** The plugin's file name, for the default socketPath. */
  name?: string;
  /** Stop gracefully on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /** How long a connection may take to send its whole request (default 30 s), and again to take its answer; it is then dropped. */
  requestTimeoutMs?: number;
}

/** A running resident daemon, as serveResident resolves it. */
export interface ResidentServer {
  /** The unix socket it listens on. */
  readonly socketPath: string;
  /** Stops accepting calls (the socket file goes at once), waits for those in flight to be answered, then releases the lock. */
  close(): Promise<void>;
  /** Settles once the daemon has stopped (close, or a signal). */
  readonly closed: Promise<void>;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Once the daemon stops, how long a peer that has its answer is given to end
 * its side (a shim does at once) before the connection is dropped. Not at
 * once: bytes of its request still unread would make the close reset the
 * connection, and the shim's read fail before it got the answer.
 */
const STOP_GRACE_MS = 1_000;

function failed(error: CniError): CallOutcome {
  return { stdout: Buffer.from(`${JSON.stringify(error.toErrorObject(CURRENT_VERSION))}\n`), stderr: '', exitCode: 1 };
}

/** The shim holds stdout in a fixed buffer: a larger one is answered as an error rather than cut. */
function fitted(outcome: CallOutcome): CallOutcome {
  if (outcome.stdout.length <= MAX_STDOUT) return outcome;
  return failed(new CniError(CniCode.INTERNAL, `the plugin printed ${outcome.stdout.length} bytes, more than the shim passes on (${MAX_STDOUT})`));
}

/** The connection's descriptor: Node keeps a unix socket's on its internal handle, with no public accessor. */
function connectionFd(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Only root and the daemon's own user may call: the socket's mode says so too, this holds if it is ever loosened. */
function refusal(fd: number | undefined): CniError | undefined {
  if (fd === undefined) return new CniError(CniCode.INTERNAL, 'the resident daemon cannot tell who connected');
  let uid: number;
  try {
    ({ uid } = native().peerCredentials(fd));
  } catch (error) {
    return new CniError(CniCode.INTERNAL, `the resident daemon cannot tell who connected: ${(error as Error).message}`);
  }
  return uid === 0 || uid === process.geteuid!() ? undefined : new CniError(CniCode.INTERNAL, `uid ${uid} may not call this resident plugin`);
}

/** Runs one request in `hostNs`; `caller` is aborted when its shim goes away, and may be by a DEL (the gate). */
type Call = (request: Request, hostNs: NetNS, caller: AbortController) => Promise<CallOutcome>;

/** Whether a call is cancelled when its caller goes away: what it would leave half-done is undone (ADD) or harmless (CHECK). */
const cancellable = ({ env }: Request): boolean => env.CNI_COMMAND === 'ADD' || env.CNI_COMMAND === 'CHECK';

/** The reason a call is cancelled with when its shim went away: there is no one to tell, only the daemon's log. */
const callerGone = (): CniError => new CniError(CniCode.INTERNAL, 'cancelled: the caller went away before the answer (the shim gave up or was killed)');

/**
 * Reads one request (its first bytes with the caller's namespace, which the
 * socket, accepted paused, has not read yet), answers it (or refuses it: when
 * the daemon is stopping, code 11), and settles when the connection is gone
 * and the call, if it started, has ended: a daemon stopping waits for a
 * cancelled call's rollback too. The caller's namespace is closed before the
 * answer goes. No peer holds the connection past `requestTimeoutMs` for its
 * whole request, nor as long again to take its answer; once `stop` is
 * aborted, nor more than STOP_GRACE_MS after its answer (a daemon stopping
 * waits for calls in flight, not for peers).
 */
function serveConnection(socket: Socket, call: Call, requestTimeoutMs: number, stop: AbortSignal): Promise<void> {
  return new Promise((settle) => {
    let running: Promise<void> | undefined;
    let hostNs: NetNS | undefined; // held from the first bytes until the call takes it
    let answering = false;
    let answered = false; // the whole answer is written: the peer has it, whether it reads it or not
    let stopWaiting = () => {};
    // The whole request, not each byte: a peer trickling its bytes must not hold a connection (and a stopping daemon) forever.
    let deadline: NodeJS.Timeout | undefined = setTimeout(() => socket.destroy(), requestTimeoutMs);
    const clearDeadline = () => {
      clearTimeout(deadline);
      deadline = undefined;
    };
    const release = () => {
      hostNs?.close();
      hostNs = undefined;
    };
    const linger = (ms: number) => {
      clearDeadline();
      deadline = setTimeout(() => socket.destroy(), ms);
    };
    const onStop = () => {
      if (answered) linger(Math.min(STOP_GRACE_MS, requestTimeoutMs));
      else if (!answering && !running) refuse(stop.reason as CniError);
    };
    stop.addEventListener('abort', onStop);
    socket.on('close', () => {
      clearDeadline();
      stop.removeEventListener('abort', onStop);
      stopWaiting();
      release();
      void (running ?? Promise.resolve()).then(() => settle());
    });
    socket.on('error', () => {}); // a shim gone mid-call: 'close' follows, and the call is cancelled
    // The peer's end closes the connection; one that never ends it is given as long to read its answer as to send its request.
    const answer = (outcome: CallOutcome) => {
      answering = true;
      socket.end(encodeResponse(fitted(outcome)), () => {
        answered = true;
        linger(stop.aborted ? Math.min(STOP_GRACE_MS, requestTimeoutMs) : requestTimeoutMs);
      });
    };
    const reader = new RequestReader();
    const start = (request: Request) => {
      clearDeadline(); // the handler may take its time: a shim has its own deadline
      // The shim sends nothing more and keeps its side open until the answer:
      // its end (or a reset) now means it went away.
      const caller = new AbortController();
      // Only an ADD (or a CHECK) is cancelled: a DEL or GC whose caller went away
      // still runs to its end, since what it would stop half-way is a cleanup.
      const gone = cancellable(request) ? () => caller.abort(callerGone()) : () => {};
      socket.off('data', onData).off('end', cutShort).on('data', gone).on('end', gone).on('close', gone);
      const ns = hostNs!;
      hostNs = undefined;
      running = call(request, ns, caller)
        .finally(() => ns.close())
        .then((outcome) => {
          if (socket.readableEnded || socket.destroyed) socket.destroy();
          else answer(outcome);
        });
    };
    const cutShort = () => {
      release();
      answer(failed(badRequest(new BadRequest('the request ended before all of it came'))));
    };
    // Answered before the request was read: what the shim still sends is read and dropped, since
    // closing a unix socket with unread data would make the shim's read fail (ECONNRESET).
    const refuse = (error: CniError) => {
      clearDeadline();
      stopWaiting();
      release();
      socket.off('data', onData).off('end', cutShort).resume();
      answer(failed(error));
    };
    const onData = (chunk: Buffer) => {
      let request: Request | undefined;
      try {
        request = reader.push(chunk);
      } catch (error) {
        return refuse(badRequest(error as BadRequest));
      }
      if (request) start(request);
    };
    // The bytes first: an older shim, which sends no namespace, is told to match the daemon's version.
    const opened = ({ bytes, netns }: Opening) => {
      let request: Request | undefined;
      try {
        request = bytes.length > 0 ? reader.push(bytes) : undefined;
      } catch (error) {
        if (!(netns instanceof BadRequest)) netns.close();
        return refuse(badRequest(error as BadRequest));
      }
      if (netns instanceof BadRequest) return refuse(badRequest(netns));
      hostNs = netns;
      socket.on('data', onData).on('end', cutShort).resume();
      if (request) start(request);
    };
    const fd = connectionFd(socket);
    const refused = refusal(fd) ?? (stop.aborted ? (stop.reason as CniError) : undefined);
    if (refused) return refuse(refused);
    try {
      stopWaiting = receiveOpening(fd!, opened);
    } catch (error) {
      refuse(new CniError(CniCode.INTERNAL, `the resident daemon cannot read the request: ${(error as Error).message}`));
    }
  });
}

function badRequest(error: BadRequest): CniError {
  return new CniError(CniCode.INTERNAL, `bad request to the resident daemon: ${error.message}`);
}

function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // bind(2) makes the file with the umask's mode: 0600 from the start, never briefly open.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
}

function checkOptions(options: ResidentOptions): { socketPath: string; handleSignals: boolean; requestTimeoutMs: number } {
  if (typeof options !== 'object' || options === null) throw netnsError(ErrorCodes.INVALID_ARG, 'serveResident takes options { socketPath } or { name }');
  // Own properties only: a polluted Object.prototype must not choose the socket or the timeout.
  const { socketPath: given, name, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS, handleSignals = true } = own(options);
  const socketPath = given ?? defaultSocketPath(name as string);
  checkSocketPath(socketPath);
  // Node's timers take at most 2^31-1 ms: past it a timeout fires after 1 ms and would drop every connection.
  if (!Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs <= 0 || requestTimeoutMs > MAX_TIMER_MS) {
    throw netnsError(ErrorCodes.INVALID_ARG, `requestTimeoutMs must be an integer from 1 to ${MAX_TIMER_MS}`);
  }
  if (typeof handleSignals !== 'boolean') throw netnsError(ErrorCodes.INVALID_ARG, 'handleSignals must be true or false');
  return { socketPath, handleSignals, requestTimeoutMs };
}

/**
 * Serves `funcs` (checked as pluginMain checks them) on a unix socket until
 * closed or signalled. Rejects with ERR_NETNS_CNI_DAEMON_RUNNING when another
 * daemon serves the socket, ERR_NETNS_INVALID_PATH when its directory is not
 * safe (not ours, writable by others) or a file that is not a socket is in
 * its place. A promise a handler leaves rejected is logged, not fatal.
 */
export async function serveResident<C extends NetConf = NetConf>(funcs: PluginFunctions<C>, info: PluginInfo, options: ResidentOptions): Promise<ResidentServer> {
  checkArguments(funcs as PluginFunctions<never>, info);
  const { socketPath, handleSignals, requestTimeoutMs } = checkOptions(options);
  const place: SocketPlace = await takeSocketPlace(socketPath);
  const inFlight = new Set<Promise<void>>();
  const gate = new AttachmentGate();
  const call: Call = ({ env, stdin }, hostNs, caller) =>
    gate.run(attachmentOf(env, stdin), env.CNI_COMMAND, caller, () => handleCall(funcs, info, env, async () => stdin, { signal: caller.signal, hostNs }));
  const stopping = new AbortController();
  // Paused: the request's first bytes carry the caller's namespace, which only the addon can read.
  const server = net().createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => {
    const served = serveConnection(socket, call, requestTimeoutMs, stopping.signal).finally(() => inFlight.delete(served));
    inFlight.add(served);
  });
  let ino: number | undefined;
  try {
    await listen(server, socketPath);
    fs().chmodSync(socketPath, 0o600);
    ino = fs().lstatSync(socketPath).ino;
  } catch (error) {
    server.close();
    place.release(ino);
    throw fromNodeError(error, `(listening on ${socketPath})`);
  }
  const logRejection = (reason: unknown) => process.stderr.write(`resident CNI daemon: a handler left a promise rejected: ${reason instanceof Error ? reason.stack : String(reason)}\n`);
  process.on('unhandledRejection', logRejection);
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let closing: Promise<void> | undefined;
  // Stopping: the socket file goes first (new calls meet no daemon: the shim says try again
  // later), calls that connected before are still accepted but answered code 11 unrun (a
  // listener closed with them queued would reset them: the shim could not tell they never
  // ran), calls in flight are answered; only then does the listener close and the lock go.
  // Signals are kept until the end: a second SIGTERM must not kill the daemon mid-call.
  const close = () =>
    (closing ??= (async () => {
      stopping.abort(new CniError(CniCode.TRY_AGAIN_LATER, `the resident daemon on ${socketPath} is stopping: try again`));
      if (fs().lstatSync(socketPath, { throwIfNoEntry: false })?.ino === ino) fs().unlinkSync(socketPath);
      // Without the listening socket, nothing may keep Node's loop alive while a call waits
      // (on a promise, a signal): the process would end with the call unanswered.
      const hold = setInterval(() => {}, 60_000);
      try {
        while (inFlight.size > 0) await Promise.all([...inFlight]);
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } finally {
        clearInterval(hold);
      }
      place.release(ino);
      process.off('unhandledRejection', logRejection);
      if (handleSignals) process.off('SIGTERM', close).off('SIGINT', close);
      markClosed();
    })());
  if (handleSignals) process.on('SIGTERM', close).on('SIGINT', close);
  return { socketPath, close, closed };
}

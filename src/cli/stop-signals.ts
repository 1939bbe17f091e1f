// The signals by which a user or a service manager stops a long command (^C,
// a terminal closed, systemctl stop), turned into an abort: the command undoes
// what it made, then dies by the same signal, as a shell or a supervisor
// expects of a command it stopped.
import { exitLikeChild } from './signal-forwarding.js';

const STOP_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM'] as const;

export interface StopSignals {
  /** Aborted at the first stop signal. */
  readonly signal: AbortSignal;
  /** Stops listening; then, if a stop signal came, dies by it. */
  done(): void;
}

/** Listens for SIGHUP, SIGINT and SIGTERM until done(). */
export function abortOnStopSignals(): StopSignals {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  // a second signal while undoing is held, not let kill the command half-way
  const listener = (signal: NodeJS.Signals): void => {
    received ??= signal;
    controller.abort(new Error(`stopped by ${signal}`));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, listener);
  return {
    signal: controller.signal,
    done() {
      for (const signal of STOP_SIGNALS) process.off(signal, listener);
      if (received) exitLikeChild(null, received);
    },
  };
}

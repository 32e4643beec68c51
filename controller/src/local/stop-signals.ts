/**
 * How a local run hears that it must end: SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed
 * terminal) stop it the same way, and the handlers stay installed for the whole run.
 *
 * Why not `process.once`: Ctrl-C reaches every process of the terminal's foreground group, and
 * npm and tsx's CLI relay the signal to their child as well, so the controller gets the same
 * signal two or three times within milliseconds. tsx's preflight (in our own process) exits at
 * once on a SIGINT or SIGTERM when no listener is left — with a one-shot listener, the relayed
 * copy killed the controller mid-drain and orphaned the broker. A copy that arrives within
 * {@link RELAY_WINDOW_MS} of the first signal is such a relay and is ignored; a later SIGINT or
 * SIGTERM is a person insisting, and forces the stop. A later SIGHUP never does: the terminal
 * closing while the run stops leaves nobody waiting, and the stop is bounded anyway.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Signals this soon after the first are relayed copies of it (npm, tsx, the process group). */
export const RELAY_WINDOW_MS = 1000;

export interface StopSignalHandlers {
  /** The first signal: stop gracefully (bounded). */
  readonly onStop: (why: StopSignal) => void;
  /** A signal after the relay window while stopping: stop everything now. */
  readonly onForce: (why: StopSignal) => void;
  /** An uncaught exception or unhandled rejection anywhere in the process. */
  readonly onCrash: (err: unknown) => void;
  /** Wall ms (injected for tests). */
  readonly nowMs?: () => number;
}

/** A process-like event source: `process` in production, an EventEmitter in tests. */
export interface SignalSource {
  on(event: string, fn: (arg: unknown) => void): unknown;
  off(event: string, fn: (arg: unknown) => void): unknown;
}

/** Installs the handlers; returns the function that removes them (tests; a run keeps them to the end). */
export function handleStopSignals(h: StopSignalHandlers, source: SignalSource = process): () => void {
  const now = h.nowMs ?? Date.now;
  let firstAt: number | null = null;
  let forced = false;
  const onSignal = (sig: StopSignal): void => {
    if (firstAt === null) {
      firstAt = now();
      h.onStop(sig);
    } else if (!forced && sig !== 'SIGHUP' && now() - firstAt >= RELAY_WINDOW_MS) {
      forced = true;
      h.onForce(sig);
    }
  };
  const listeners = STOP_SIGNALS.map((sig) => [sig, () => onSignal(sig)] as const);
  const crash = (err: unknown): void => h.onCrash(err);
  for (const [sig, fn] of listeners) source.on(sig, fn);
  source.on('uncaughtException', crash);
  source.on('unhandledRejection', crash);
  return () => {
    for (const [sig, fn] of listeners) source.off(sig, fn);
    source.off('uncaughtException', crash);
    source.off('unhandledRejection', crash);
  };
}

/**
 * Every way a local run can end, in one place (ADR 0033):
 *
 * - a stop request — SIGINT, SIGTERM, SIGHUP, a closed stdout/stderr, the npm/tsx wrapper gone —
 *   starts the orderly stop once ({@link requested}); relayed copies of the signal are ignored;
 * - a signal repeated later while stopping, or an uncaught exception anywhere in the process,
 *   kills every process of the run at once and exits;
 * - whatever way the process exits (`process.exit` anywhere included), an `exit` handler kills
 *   what the state directory still records as running: no task, sidecar or broker outlives it.
 *
 * Only `kill -9` of the controller escapes all three; its children watch it instead (ADR 0016).
 */
import { plural } from '../scheduling/words';
import { watchWrapperParent } from './parent-watch';
import { killRunProcesses, type StopReport } from './run-local';
import { handleStopSignals } from './stop-signals';

export interface SuperviseOptions {
  readonly stateDir: string;
  /** One line to the person running it (stderr). Must not throw. */
  readonly note: (line: string) => void;
  /** Where the details of a crash go (the log file), when known. */
  readonly logCrash?: (err: unknown) => void;
  /** The drain limit, in the stop line. */
  readonly deadlineMs: number;
}

export interface Supervisor {
  /** Resolves with why, on the first stop request. */
  readonly requested: Promise<string>;
  /** Why the run was asked to stop; null while nobody asked. */
  readonly reason: string | null;
  /** Runs first on any ending (the terminal view's last drawing, so no stale frame survives). */
  beforeEnd(fn: () => void): void;
  /** Ends the process soon with `code`, even if a handle left open would keep it alive. */
  exit(code: number): void;
}

/** How long an exit waits for the event loop to drain on its own before it exits anyway. */
const EXIT_GRACE_MS = 1000;

export function supervise(o: SuperviseOptions): Supervisor {
  let reason: string | null = null;
  let resolveRequest: (why: string) => void = () => {};
  const requested = new Promise<string>((r) => (resolveRequest = r));
  const before: (() => void)[] = [];
  const runBefore = (): void => {
    for (const fn of before.splice(0))
      try {
        fn();
      } catch {
        // a view that cannot draw any more must not stop the ending
      }
  };
  const request = (why: string): void => {
    if (reason !== null) return;
    reason = why;
    runBefore();
    o.note(
      `\noptimus local: ${why}, shutting down (jobs checkpoint, sidecars deliver what they hold; at most ${o.deadlineMs / 1000} s; run again to resume)`,
    );
    resolveRequest(why);
  };
  const killNow = (line: string, code: number): void => {
    runBefore();
    const killed = killRunProcesses(o.stateDir);
    o.note(`optimus local: ${line}; killed ${plural(killed, 'process', 'processes')} of the run`);
    process.exit(code);
  };
  handleStopSignals({
    onStop: (sig) => request(sig),
    onForce: (sig) => killNow(`${sig} again while stopping`, 130),
    onCrash: (err) => {
      o.logCrash?.(err);
      killNow(`crashed (${err instanceof Error ? err.message : String(err)})`, 1);
    },
  });
  // A closed terminal or pipe (EPIPE, EIO) must stop the run cleanly, not crash it and orphan the tasks.
  for (const [name, stream] of [
    ['stdout', process.stdout],
    ['stderr', process.stderr],
  ] as const)
    stream.on('error', () => request(`${name} closed`));
  watchWrapperParent(() => request('the npm/tsx process that started us exited'));
  // The last resort, synchronous: whatever exits the process leaves nothing of the run behind.
  process.on('exit', () => killRunProcesses(o.stateDir));
  return {
    requested,
    get reason() {
      return reason;
    },
    beforeEnd: (fn) => before.push(fn),
    exit: (code) => {
      process.exitCode = code;
      setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
    },
  };
}

/** The run's last line: what was stopped, how long it took, what had to be killed. */
export function stoppedLine(r: StopReport): string {
  const parts = [plural(r.tasks, 'task'), plural(r.sidecars, 'sidecar'), ...(r.broker ? ['the broker'] : [])];
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  const head = `optimus local: stopped ${list} in ${(r.ms / 1000).toFixed(1)} s`;
  return r.killed === 0
    ? head
    : `${head}; ${plural(r.killed, 'process', 'processes')} still running at the ${r.deadlineMs / 1000} s limit ${r.killed === 1 ? 'was' : 'were'} killed`;
}

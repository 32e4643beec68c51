/**
 * `--watch`: load, print when what would be printed changed, wait for a change, again — until the
 * signal aborts (Ctrl-C). A change is announced by the controller's live event stream
 * (`GET /api/v1/events`) when it has one, else found by polling. A controller that goes away
 * (a restart) is waited for, saying so once; an answer that will not change by waiting (401, 404)
 * ends the watch with that error.
 */
import { ClientError, type ApiClient } from './api-client';

export interface WatchOptions {
  readonly client: ApiClient;
  /** Loads the state and returns what to print for it. */
  readonly frame: (signal: AbortSignal) => Promise<string>;
  readonly print: (frame: string) => void;
  /** One line on stderr. */
  readonly warn: (message: string) => void;
  readonly signal: AbortSignal;
  /** Between loads without an event stream (and after a failure). */
  readonly pollMs?: number;
  /** Between loads while the event stream is up: a safety net, events do the work. */
  readonly idleMs?: number;
  /** Events arriving this close together cause one load. */
  readonly settleMs?: number;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** "Something changed": remembered until the loop next waits, so a change during a load is not lost. */
class Trigger {
  private pending = false;
  private wake: (() => void) | null = null;

  fire(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Resolves at the next (or an already pending) fire, after `ms`, or when `signal` aborts. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    if (!this.pending) {
      const ac = new AbortController();
      const stop = (): void => ac.abort();
      signal.addEventListener('abort', stop, { once: true });
      this.wake = stop;
      await pause(ms, ac.signal);
      this.wake = null;
      signal.removeEventListener('abort', stop);
    }
    this.pending = false;
  }
}

export async function watch(o: WatchOptions): Promise<void> {
  const pollMs = o.pollMs ?? 2000;
  const idleMs = o.idleMs ?? 15_000;
  const settleMs = o.settleMs ?? 150;
  const changed = new Trigger();
  let live = false;
  // Set by the event follower (a closure, so a box: the loop's checks must see it change).
  const failed: { error: Error | null } = { error: null };
  const events = followEvents(o, {
    onEvent: () => changed.fire(),
    onLive: (up) => (live = up),
    onFatal: (err) => {
      failed.error = err instanceof Error ? err : new Error(String(err));
      changed.fire();
    },
  });
  let last: string | null = null;
  let down = false;
  try {
    while (!o.signal.aborted && failed.error === null) {
      try {
        const text = await o.frame(o.signal);
        if (down) o.warn('controller reachable again');
        down = false;
        if (text !== last) o.print(text);
        last = text;
      } catch (err) {
        if (o.signal.aborted) break;
        if (!(err instanceof ClientError) || !err.transient) throw err;
        if (!down) o.warn(`${err.message} — retrying every ${pollMs / 1000} s (Ctrl-C to stop)`);
        down = true;
      }
      await changed.wait(live && !down ? idleMs : pollMs, o.signal);
      // A burst of events (a round's decisions) is one change: let it settle.
      if (!o.signal.aborted && failed.error === null) await pause(settleMs, o.signal);
    }
    if (failed.error !== null) throw failed.error;
  } finally {
    await events;
  }
}

interface EventHandlers {
  onEvent(): void;
  onLive(up: boolean): void;
  onFatal(err: unknown): void;
}

/** Keeps the event stream open (reconnecting) while the watch runs; falls back to polling without one. */
async function followEvents(o: WatchOptions, h: EventHandlers): Promise<void> {
  let announcedPolling = false;
  const pollMs = o.pollMs ?? 2000;
  while (!o.signal.aborted) {
    try {
      const stream = await o.client.events(o.signal);
      if (stream === null) {
        o.warn(`this controller has no live event stream: polling every ${pollMs / 1000} s`);
        return;
      }
      h.onLive(true);
      for await (const m of stream) if (m.event !== 'hello') h.onEvent();
    } catch (err) {
      if (o.signal.aborted) return;
      if (err instanceof ClientError && !err.transient) return h.onFatal(err);
      // Unreachable or cut: the loads say so; poll meanwhile and try the stream again.
      if (!announcedPolling && !(err instanceof ClientError)) {
        o.warn(`live event stream failed (${err instanceof Error ? err.message : String(err)}): polling`);
        announcedPolling = true;
      }
    }
    h.onLive(false);
    h.onEvent();
    await pause(pollMs, o.signal);
  }
}

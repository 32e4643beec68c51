/**
 * Waiting on an informer cache: a condition is re-read from the cache whenever the cache changes
 * (never by listing the API server on a timer), at the deadlines the caller names, and on a slow
 * safety tick that reads only memory. The wait ends when the condition says so or the signal aborts.
 */

/** What an informer cache offers a wait: a change notification (with the changed object). */
export interface ChangeFeed<T = unknown> {
  /** Calls `fn` after every add/update/delete; returns the unsubscribe function. */
  onChange(fn: (obj: T) => void): () => void;
}

export type WaitEnd<T> = { readonly done: true; readonly value: T } | { readonly done: false };

export interface CacheWaitOptions<T> {
  readonly feed: ChangeFeed;
  /** The condition: a value ends the wait, null waits on. May be async (a confirming read). */
  readonly check: () => T | null | Promise<T | null>;
  /** Ms from now at which the condition is re-read anyway (its own deadlines: a timeout, a grace). */
  readonly wakeAt: readonly number[];
  /** Ms between safety re-reads (missed events, clock-based conditions). */
  readonly recheckMs: number;
  readonly signal?: AbortSignal | undefined;
}

/** Resolves with the condition's value, or `{ done: false }` when the signal aborted first. */
export function waitOnCache<T>(o: CacheWaitOptions<T>): Promise<WaitEnd<T>> {
  if (o.signal?.aborted) return Promise.resolve({ done: false });
  return new Promise((resolve) => {
    let settled = false;
    let running = false;
    let again = false;
    const timers: NodeJS.Timeout[] = [];
    const end = (r: WaitEnd<T>): void => {
      if (settled) return;
      settled = true;
      off();
      for (const t of timers) clearTimeout(t);
      clearInterval(tick);
      o.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // One check at a time; changes during a check ask for one more afterwards.
    const run = (): void => {
      if (settled) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      void (async () => {
        let value: T | null = null;
        try {
          value = await o.check();
        } catch {
          value = null; // a failed confirming read: the next change or tick tries again
        }
        running = false;
        if (value !== null) end({ done: true, value });
        else if (again) {
          again = false;
          run();
        }
      })();
    };
    const onAbort = (): void => end({ done: false });
    const off = o.feed.onChange(() => run());
    o.signal?.addEventListener('abort', onAbort, { once: true });
    for (const ms of o.wakeAt) timers.push(setTimeout(run, Math.max(0, ms)));
    const tick = setInterval(run, o.recheckMs);
    run();
  });
}

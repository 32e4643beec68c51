/**
 * One write for many requests: requests made before a queued write starts share it, and a request
 * made while a write runs queues the next one. A caller that awaits its request knows the state as
 * of its request is written (a write reads the state when it starts).
 */
export class Coalesced {
  private tail: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;

  constructor(private readonly write: () => Promise<void>) {}

  /** Resolves once a write that started after this call has finished. */
  request(): Promise<void> {
    if (this.queued) return this.queued;
    const q = this.tail.then(() => {
      this.queued = null;
      return this.write();
    });
    this.queued = q;
    this.tail = q.catch(() => {});
    return q;
  }
}

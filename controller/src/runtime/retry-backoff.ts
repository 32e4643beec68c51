/**
 * Rollout failures in a row per job, and when the job may be tried again: doubling from a second,
 * at most a minute (wall ms), so a job whose rollouts keep failing does not take every round.
 */
const retryDelayMs = (failures: number): number => Math.min(60_000, 1000 * 2 ** Math.max(0, failures - 1));

export class RetryBackoff {
  private readonly jobs = new Map<string, { failures: number; atMs: number }>();

  /** Ms the job must still wait at `nowMs` (0: it may go). */
  waitMs(id: string, nowMs: number): number {
    const r = this.jobs.get(id);
    return r && nowMs < r.atMs ? r.atMs - nowMs : 0;
  }

  /** Records a failure at `nowMs`; returns the ms until the next try. */
  failed(id: string, nowMs: number): number {
    const failures = (this.jobs.get(id)?.failures ?? 0) + 1;
    const delay = retryDelayMs(failures);
    this.jobs.set(id, { failures, atMs: nowMs + delay });
    return delay;
  }

  /** A success, or a job that is gone: it starts afresh. */
  forget(id: string): void {
    this.jobs.delete(id);
  }
}

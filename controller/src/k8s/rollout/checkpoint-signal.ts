/**
 * How the executor learns that a job wrote its checkpoint: the sidecar parses the checkpoint line
 * (`Saved checkpoint to "..."`) from the training log and reports it (a `checkpoint` metrics
 * record); the runtime feeds those reports into a {@link CheckpointLedger}.
 */
export interface CheckpointSignal {
  /** Resolves true once a checkpoint of `jobId` at or after `sinceMs` is known, false after `timeoutMs`. */
  waitForCheckpoint(jobId: string, sinceMs: number, timeoutMs: number): Promise<boolean>;
}

/** In-memory ledger of checkpoint reports per job. */
export class CheckpointLedger implements CheckpointSignal {
  private readonly last = new Map<string, number>();
  private readonly waiters = new Set<{ jobId: string; since: number; resolve: (ok: boolean) => void }>();

  /** Records a checkpoint of `jobId` reported at `atMs` (epoch ms). */
  record(jobId: string, atMs: number): void {
    this.last.set(jobId, Math.max(atMs, this.last.get(jobId) ?? -Infinity));
    for (const w of [...this.waiters]) {
      if (w.jobId === jobId && atMs >= w.since) {
        this.waiters.delete(w);
        w.resolve(true);
      }
    }
  }

  waitForCheckpoint(jobId: string, sinceMs: number, timeoutMs: number): Promise<boolean> {
    if ((this.last.get(jobId) ?? -Infinity) >= sinceMs) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = {
        jobId,
        since: sinceMs,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      // unref: a pending wait must not keep a stopping controller alive for the whole grace period.
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        resolve(false);
      }, timeoutMs).unref();
      this.waiters.add(w);
    });
  }
}

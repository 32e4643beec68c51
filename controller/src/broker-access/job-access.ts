/**
 * Grants and revokes each job's broker access with the job's lifecycle (ADR 0013): on admission the
 * job's identities are created on the broker and its credential is put where its tasks read it (a
 * Secret in the job's namespace, a file in local mode); on removal both go. Idempotent and retried:
 * a broker that is down or lost its state is brought back to what the controller wants on the next
 * attempt or reconnect (`reconcile`), and nothing here ever fails a job's admission.
 */
import { jobKey, type JobId } from '../../../shared/src/topics';
import type { BrokerIdentities } from './identities';
import { jobPassword, type JobIdentity } from './job-identity';

/** Where a job's tasks find their credential. */
export interface CredentialStore {
  put(job: JobIdentity, password: string): Promise<void>;
  remove(job: JobIdentity): Promise<void>;
}

export interface JobAccessOptions {
  readonly identities: BrokerIdentities;
  readonly credentials: CredentialStore;
  /** The controller's secret key; job passwords are derived from it. */
  readonly key: Buffer | string;
  readonly retryMs?: number;
  readonly onError?: (err: unknown, job: JobId | null) => void;
}

export class JobAccess {
  private readonly jobs = new Map<string, JobIdentity>();
  private readonly failed = new Set<string>();
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** Set by the first `reconcile` (the first broker connect): until then grants are only remembered. */
  private online = false;

  constructor(private readonly o: JobAccessOptions) {}

  /** Whether `job` currently has access (for tests and status). */
  has(job: JobId): boolean {
    return this.jobs.has(jobKey(job)) && !this.failed.has(jobKey(job));
  }

  /** Grants access; resolves once granted or after `waitMs`, whichever is first (it goes on trying). */
  async grant(job: JobIdentity, waitMs: number): Promise<void> {
    this.jobs.set(jobKey(job), job);
    // Before the broker connection exists (a controller starting up) there is nothing to wait for:
    // the first connect applies every remembered grant.
    if (!this.online) return;
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((r) => (timer = setTimeout(r, waitMs)));
    await Promise.race([this.apply(job), wait]);
    clearTimeout(timer);
  }

  async revoke(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    this.failed.delete(id);
    try {
      await this.o.identities.removeJob(job);
      await this.o.credentials.remove(job);
    } catch (err) {
      this.o.onError?.(err, job);
    }
  }

  /** Re-applies everything (after each broker connect: the broker may have restarted empty). */
  async reconcile(): Promise<void> {
    this.online = true;
    try {
      await this.o.identities.ensureController();
    } catch (err) {
      this.o.onError?.(err, null);
      this.scheduleRetry();
      return;
    }
    for (const job of this.jobs.values()) await this.apply(job);
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
  }

  private async apply(job: JobIdentity): Promise<void> {
    const key = jobKey(job);
    try {
      const password = jobPassword(this.o.key, job);
      // The credential first: a pod may start the moment its identity exists.
      await this.o.credentials.put(job, password);
      await this.o.identities.ensureJob(job, password);
      this.failed.delete(key);
    } catch (err) {
      this.failed.add(key);
      this.o.onError?.(err, job);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.retry !== null || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.reconcile();
    }, this.o.retryMs ?? 5000);
    this.retry.unref();
  }
}

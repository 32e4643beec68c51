/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it: the holder renews
 * `renewTime` every `retryPeriodMs`; a candidate takes over when it has seen no change of the
 * lease for `leaseDurationSec` (measured on its own clock, so clock skew does not matter); every
 * write carries the read resourceVersion, so of two candidates exactly one wins (the other gets
 * 409). A leader that cannot renew within `renewDeadlineMs` steps down. Stopping releases the lease.
 */
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';

export interface LeaderElectionOptions {
  readonly clients: KubeClients;
  readonly namespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly leaseDurationSec?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown) => void;
}

export interface LeaderElector {
  start(): void;
  /** Stops campaigning; a leader releases the lease so another replica takes over at once. */
  stop(): Promise<void>;
  isLeader(): boolean;
  /** Called with true on becoming leader and false on losing it. */
  onChange(fn: (leader: boolean) => void): () => void;
}

/**
 * Lease times are MicroTime: a real API server refuses fewer than six fractional digits
 * (`parsing time … as "2006-01-02T15:04:05.000000Z07:00"`). client-node serialises a plain `Date`
 * with three; `V1MicroTime` with six (as `events.ts` does for eventTime).
 */
const microTime = (ms: number): Date => new V1MicroTime(ms);

export class LeaseElector implements LeaderElector {
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private tick: Promise<void> = Promise.resolve();
  private lastRenewMs = -Infinity;
  private observed: { key: string; atMs: number } | null = null;
  private readonly listeners = new Set<(leader: boolean) => void>();
  private readonly o: Required<Omit<LeaderElectionOptions, 'onError'>> &
    Pick<LeaderElectionOptions, 'onError'>;

  constructor(opts: LeaderElectionOptions) {
    this.o = { leaseDurationSec: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, now: Date.now, ...opts };
  }

  isLeader(): boolean {
    return this.leader;
  }

  onChange(fn: (leader: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = () => {
      this.tick = this.tryAcquireOrRenew().finally(() => {
        if (this.running) this.timer = setTimeout(loop, this.o.retryPeriodMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.tick;
    if (this.leader) {
      try {
        await this.release();
      } catch (err) {
        this.o.onError?.(err);
      }
      this.setLeader(false);
    }
  }

  private setLeader(v: boolean): void {
    if (v === this.leader) return;
    this.leader = v;
    // A throwing listener must neither hide the change from the others nor pass for an API error.
    for (const l of this.listeners) {
      try {
        l(v);
      } catch (err) {
        this.o.onError?.(err);
      }
    }
  }

  private get api() {
    return this.o.clients.coordination;
  }

  private record(holder: string, nowMs: number): V1Lease['spec'] {
    return {
      holderIdentity: holder,
      leaseDurationSeconds: this.o.leaseDurationSec,
      renewTime: microTime(nowMs),
    };
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const now = this.o.now();
    try {
      const ok = await this.attempt(now);
      if (ok) this.lastRenewMs = now;
      this.setLeader(ok || (this.leader && this.o.now() - this.lastRenewMs < this.o.renewDeadlineMs));
    } catch (err) {
      this.o.onError?.(err);
      if (this.leader && this.o.now() - this.lastRenewMs >= this.o.renewDeadlineMs) this.setLeader(false);
    }
  }

  /** One round: true when we hold the lease afterwards. */
  private async attempt(now: number): Promise<boolean> {
    const { namespace, leaseName: name, identity } = this.o;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      return this.conflictIsLoss(() =>
        this.api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: { ...this.record(identity, now), acquireTime: microTime(now), leaseTransitions: 0 },
          },
        }),
      );
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // Expiry is judged by when WE last saw the record change, not by the holder's clock.
    const key = `${holder}|${String(spec.renewTime ?? '')}`;
    if (this.observed?.key !== key) this.observed = { key, atMs: now };
    const expired =
      holder === '' ||
      now - this.observed.atMs >= (spec.leaseDurationSeconds ?? this.o.leaseDurationSec) * 1000;
    if (holder !== identity && !expired) return false;
    const takeover = holder !== identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        ...this.record(identity, now),
        ...(takeover
          ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }
          : {}),
      },
    };
    return this.conflictIsLoss(() => this.api.replaceNamespacedLease({ namespace, name, body }));
  }

  private async conflictIsLoss(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      if (statusCodeOf(err) === 409) return false; // another replica wrote first
      throw err;
    }
  }

  private async release(): Promise<void> {
    const { namespace, leaseName: name, identity } = this.o;
    const lease = await this.api.readNamespacedLease({ namespace, name });
    if (lease.spec?.holderIdentity !== identity) return;
    await this.api.replaceNamespacedLease({
      namespace,
      name,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } },
    });
  }
}

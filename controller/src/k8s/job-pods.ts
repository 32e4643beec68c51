/**
 * The pod-level API calls of a rollout: list a job's pods, create a set, delete a set (with a
 * grace period: the kubelet sends SIGTERM, the job checkpoints), and wait for a set to run or go.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClients } from './clients';
import { statusCodeOf } from './clients';
import { LABEL_JOB } from './names';
import type { PodVerdict } from './pod-state';
import { podState } from './pod-state';

export interface Waiting {
  /** Poll period of the waits (ms). */
  readonly pollIntervalMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
}

export type StartOutcome =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly message: string };

export class JobPods {
  constructor(
    private readonly clients: KubeClients,
    private readonly wait: Waiting,
  ) {}

  async list(namespace: string, job: string): Promise<V1Pod[]> {
    const r = await this.clients.core.listNamespacedPod({ namespace, labelSelector: `${LABEL_JOB}=${job}` });
    return r.items;
  }

  async create(pods: readonly V1Pod[]): Promise<void> {
    for (const body of pods)
      await this.clients.core.createNamespacedPod({ namespace: body.metadata?.namespace ?? '', body });
  }

  /** Deletes the named pods (already-gone ones are fine). */
  async delete(namespace: string, names: readonly string[], gracePeriodSeconds: number): Promise<void> {
    for (const name of names) {
      try {
        await this.clients.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds });
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }
  }

  /** Waits until none of `names` exists any more; false on timeout. */
  async waitGone(
    namespace: string,
    job: string,
    names: readonly string[],
    timeoutMs: number,
  ): Promise<boolean> {
    const deadline = this.wait.now() + timeoutMs;
    const wanted = new Set(names);
    for (;;) {
      const left = (await this.list(namespace, job)).filter((p) => wanted.has(p.metadata?.name ?? ''));
      if (left.length === 0) return true;
      if (this.wait.now() >= deadline) return false;
      await this.wait.sleep(this.wait.pollIntervalMs);
    }
  }

  /**
   * Waits until every pod of `names` runs (ok), any of them fails for good (image error,
   * failed, or unschedulable for longer than `unschedulableGraceMs`), or `timeoutMs` passes.
   */
  async waitRunning(
    namespace: string,
    job: string,
    names: readonly string[],
    o: { timeoutMs: number; unschedulableGraceMs: number },
  ): Promise<StartOutcome> {
    const start = this.wait.now();
    for (;;) {
      const byName = new Map((await this.list(namespace, job)).map((p) => [p.metadata?.name ?? '', p]));
      const verdicts = names.map((n): [string, PodVerdict] => {
        const p = byName.get(n);
        return [n, p ? podState(p) : { state: 'failed', reason: 'Missing', message: 'the pod disappeared' }];
      });
      const elapsed = this.wait.now() - start;
      const fatal = verdicts.find(
        ([, v]) =>
          v.state === 'failed' ||
          v.state === 'image-error' ||
          v.state === 'terminating' ||
          v.state === 'succeeded' ||
          (v.state === 'unschedulable' && elapsed >= o.unschedulableGraceMs),
      );
      if (fatal) {
        const [name, v] = fatal;
        return { ok: false, reason: v.reason ?? v.state, message: `pod ${name}: ${v.message ?? v.state}` };
      }
      if (verdicts.every(([, v]) => v.state === 'running')) return { ok: true };
      if (elapsed >= o.timeoutMs) {
        const slow = verdicts.filter(([, v]) => v.state !== 'running').map(([n]) => n);
        return {
          ok: false,
          reason: 'Timeout',
          message: `not running after ${Math.round(o.timeoutMs / 1000)} s: ${slow.join(', ')}`,
        };
      }
      await this.wait.sleep(this.wait.pollIntervalMs);
    }
  }
}

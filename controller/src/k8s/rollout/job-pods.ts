/**
 * The pod-level calls of a rollout: create a set, delete a set (with a grace period: the kubelet
 * sends SIGTERM, the job checkpoints), and wait for a set to run or go. Reads come from the pod
 * informer's cache, and waits wake on its events: nothing lists the API server on a timer.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ChangeFeed } from '../api/cache-wait';
import { waitOnCache } from '../api/cache-wait';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';
import { LABEL_JOB } from '../api/names';
import type { PodVerdict } from './pod-state';
import { podState } from './pod-state';

/** The pod informer's cache (a {@link WatchedList} of every pod). */
export interface PodCache extends ChangeFeed<V1Pod> {
  /** Every pod, or those of one namespace (the informer keeps them by namespace). */
  items(namespace?: string): readonly V1Pod[];
}

export interface Waiting {
  /**
   * Ms between the waits' safety re-reads of the cache (they wake on their job's pod events too),
   * and the least time between two confirming lists of the API server by one wait.
   */
  readonly recheckMs: number;
  readonly now: () => number;
}

const ofJob = (p: V1Pod, namespace: string, job: string): boolean =>
  p.metadata?.namespace === namespace && p.metadata.labels?.[LABEL_JOB] === job;

export type StartOutcome =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly message: string };

const nameOf = (p: V1Pod): string => p.metadata?.name ?? '';

/** True when `p` is the very pod `want` names (same name and, when known, the same uid). */
const isSame = (p: V1Pod, want: V1Pod): boolean =>
  nameOf(p) === nameOf(want) && (want.metadata?.uid === undefined || p.metadata?.uid === want.metadata.uid);

export class JobPods {
  constructor(
    private readonly clients: KubeClients,
    private readonly cache: PodCache,
    private readonly wait: Waiting,
  ) {}

  /** The job's pods as the informer holds them (read from its namespace only). */
  list(namespace: string, job: string): V1Pod[] {
    return this.cache.items(namespace).filter((p) => ofJob(p, namespace, job));
  }

  /**
   * The cache's changes to one job's pods: a wait wakes for its own job, not for every pod event of
   * the cluster (a rollout of many jobs at once would otherwise re-read each on every event).
   */
  private jobFeed(namespace: string, job: string): ChangeFeed<V1Pod> {
    return { onChange: (fn) => this.cache.onChange((p) => ofJob(p, namespace, job) && fn(p)) };
  }

  /** Creates the pods in order; returns them as the API server stored them (with their uids). */
  async create(pods: readonly V1Pod[]): Promise<V1Pod[]> {
    const out: V1Pod[] = [];
    for (const body of pods)
      out.push(
        await this.clients.core.createNamespacedPod({ namespace: body.metadata?.namespace ?? '', body }),
      );
    return out;
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

  /**
   * Waits until none of `names` exists any more; false on timeout or abort. The cache saying so
   * is confirmed by one list call: a pod created and deleted before the informer saw it is absent
   * from the cache but may still exist.
   */
  async waitGone(
    namespace: string,
    job: string,
    names: readonly string[],
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const wanted = new Set(names);
    const deadline = this.wait.now() + timeoutMs;
    const left = (pods: readonly V1Pod[]) => pods.filter((p) => wanted.has(nameOf(p)));
    let listedAt = -Infinity;
    const end = await waitOnCache<boolean>({
      feed: this.jobFeed(namespace, job),
      wakeAt: [timeoutMs],
      recheckMs: this.wait.recheckMs,
      signal,
      check: async () => {
        // While the cache and the API server disagree, confirm at most twice per recheck interval.
        if (
          left(this.list(namespace, job)).length === 0 &&
          this.wait.now() - listedAt >= this.wait.recheckMs / 2
        ) {
          listedAt = this.wait.now();
          const listed = await this.clients.core.listNamespacedPod({
            namespace,
            labelSelector: `${LABEL_JOB}=${job}`,
          });
          if (left(listed.items).length === 0) return true;
        }
        return this.wait.now() >= deadline ? false : null;
      },
    });
    return end.done && end.value;
  }

  /**
   * Waits until every pod of `created` runs (ok), any of them fails for good (image error,
   * failed, deleted, or unschedulable for longer than `unschedulableGraceMs`), `timeoutMs`
   * passes, or `signal` aborts. A pod the cache has not shown yet counts as pending.
   */
  async waitRunning(
    created: readonly V1Pod[],
    o: { timeoutMs: number; unschedulableGraceMs: number; signal?: AbortSignal | undefined },
  ): Promise<StartOutcome> {
    const start = this.wait.now();
    const seen = new Set<string>();
    const ns = created[0]?.metadata?.namespace ?? '';
    const job = created[0]?.metadata?.labels?.[LABEL_JOB] ?? '';
    const end = await waitOnCache<StartOutcome>({
      feed: this.jobFeed(ns, job),
      wakeAt: [o.unschedulableGraceMs, o.timeoutMs],
      recheckMs: this.wait.recheckMs,
      signal: o.signal,
      check: () => this.runningOutcome({ created, ns, job }, seen, this.wait.now() - start, o),
    });
    if (end.done) return end.value;
    const why = o.signal?.reason as unknown;
    return {
      ok: false,
      reason: 'Aborted',
      message: why instanceof Error ? why.message : 'the rollout was aborted',
    };
  }

  private runningOutcome(
    set: { readonly created: readonly V1Pod[]; readonly ns: string; readonly job: string },
    seen: Set<string>,
    elapsed: number,
    o: { timeoutMs: number; unschedulableGraceMs: number },
  ): StartOutcome | null {
    const { created } = set;
    const cached = this.list(set.ns, set.job);
    const verdicts = created.map((want): [string, PodVerdict] => {
      const name = nameOf(want);
      const p = cached.find((c) => isSame(c, want));
      if (p) {
        seen.add(name);
        return [name, podState(p)];
      }
      return [
        name,
        seen.has(name)
          ? { state: 'failed', reason: 'Missing', message: 'the pod disappeared' }
          : { state: 'pending' },
      ];
    });
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
    if (elapsed < o.timeoutMs) return null;
    const slow = verdicts.filter(([, v]) => v.state !== 'running').map(([n]) => n);
    return {
      ok: false,
      reason: 'Timeout',
      message: `not running after ${Math.round(o.timeoutMs / 1000)} s: ${slow.join(', ')}`,
    };
  }
}

import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeClients } from '../api/clients';
import { JobPods, type PodCache } from './job-pods';
import { LABEL_JOB } from '../api/names';

const pod = (job: string, name: string, phase = 'Pending'): V1Pod => ({
  metadata: { namespace: 'team', name, uid: `uid-${name}`, labels: { [LABEL_JOB]: job } },
  status: { phase },
});

/** An informer cache that counts its reads, with events fired by the test. */
function fakeCache(initial: V1Pod[]): PodCache & { pods: V1Pod[]; reads: number; emit(p: V1Pod): void } {
  const listeners = new Set<(p: V1Pod) => void>();
  const c = {
    pods: initial,
    reads: 0,
    items(namespace?: string) {
      c.reads++;
      return c.pods.filter((p) => namespace === undefined || p.metadata?.namespace === namespace);
    },
    onChange(fn: (p: V1Pod) => void) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    emit(p: V1Pod) {
      for (const l of listeners) l(p);
    },
  };
  return c;
}

/** Clients whose pod list answers what `apiPods` holds, counting the calls. */
function fakeClients(apiPods: () => V1Pod[]): KubeClients & { lists: number } {
  const c = {
    lists: 0,
    core: {
      listNamespacedPod: () => {
        c.lists++;
        return Promise.resolve({ items: apiPods() });
      },
    },
  };
  return c as unknown as KubeClients & { lists: number };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('JobPods waits', () => {
  it('wake for their own job’s pod events, not for every pod event of the cluster', async () => {
    const mine = [pod('a', 'a-worker-0'), pod('a', 'a-ps-0')];
    const cache = fakeCache([...mine, pod('b', 'b-worker-0')]);
    const pods = new JobPods(
      fakeClients(() => []),
      cache,
      { recheckMs: 60_000, now: Date.now },
    );
    const outcome = pods.waitRunning(mine, { timeoutMs: 60_000, unschedulableGraceMs: 60_000 });
    await tick();
    const before = cache.reads;
    for (let i = 0; i < 500; i++) cache.emit(pod('b', `b-worker-${i}`, 'Running'));
    await tick();
    expect(cache.reads).toBe(before);
    cache.pods = [...mine.map((p) => ({ ...p, status: { phase: 'Running' } })), pod('b', 'b-worker-0')];
    cache.emit(cache.pods[0] as V1Pod);
    expect(await outcome).toEqual({ ok: true });
  });

  it('confirm "gone" with the API server at most twice per recheck interval, however many events', async () => {
    let now = 0;
    let apiHas = [pod('a', 'a-worker-0')];
    const clients = fakeClients(() => apiHas);
    // The cache already lost the pod (say, a relist), the API server still has it.
    const cache = fakeCache([]);
    const pods = new JobPods(clients, cache, { recheckMs: 1000, now: () => now });
    const gone = pods.waitGone('team', 'a', ['a-worker-0'], 60_000);
    await tick();
    for (let i = 0; i < 200; i++) {
      cache.emit(pod('a', 'a-ps-0'));
      await tick();
    }
    expect(clients.lists).toBe(1);
    now = 600; // past half the interval: the next event may confirm again
    apiHas = [];
    cache.emit(pod('a', 'a-ps-0'));
    expect(await gone).toBe(true);
    expect(clients.lists).toBe(2);
  });
});

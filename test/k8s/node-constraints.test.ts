/**
 * Pod templates' node constraints reach the policy: against the API double's scheduler (which
 * binds a pod only where its nodeSelector, required node affinity and tolerations allow), every
 * pod the controller pins is bound and runs — the PS where its nodeSelector points, GPU workers on
 * the tainted GPU nodes they tolerate, and a job with no constraint off every tainted node (the
 * control plane included), though those nodes have the most room.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRun } from '../../controller/src/k8s/run-kubernetes';
import type { EmbeddedBroker } from '../../controller/src/local/broker';
import { startEmbeddedBroker } from '../../controller/src/local/broker';
import { startRun, until } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';

const GiB = 1024 ** 3;
let cluster: TestCluster | undefined;
let broker: EmbeddedBroker | undefined;
let run: KubernetesRun | undefined;
afterEach(async () => {
  await run?.stop();
  await broker?.close();
  await cluster?.close();
});

const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' as const };

describe('node constraints from pod templates, against the API double', () => {
  it('pins every pod where the real scheduler can bind it', async () => {
    cluster = await startTestCluster([
      { name: 'cpu-a', capacity: { cpu: 8, memory: 32 * GiB }, labels: { pool: 'a' } },
      { name: 'cpu-b', capacity: { cpu: 32, memory: 128 * GiB }, labels: { pool: 'b' } },
      { name: 'gpu-1', capacity: { cpu: 32, memory: 128 * GiB, 'nvidia.com/gpu': 4 }, taints: [GPU_TAINT] },
      { name: 'gpu-2', capacity: { cpu: 32, memory: 128 * GiB, 'nvidia.com/gpu': 4 }, taints: [GPU_TAINT] },
      {
        name: 'control-plane',
        capacity: { cpu: 64, memory: 256 * GiB },
        taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
      },
    ]);
    broker = await startEmbeddedBroker(0);
    run = await startRun(cluster, broker.url);
    await cluster.submit({
      name: 'gpu',
      workerDemand: { cpu: 2, memory: 4 * GiB, 'nvidia.com/gpu': 1 },
      podSpec: {
        ps: { nodeSelector: { pool: 'a' } },
        worker: { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] },
      },
    });
    await cluster.submit({ name: 'plain' });

    const podsOf = (job: string) =>
      cluster!.pods('default').filter((p) => p.metadata?.labels?.['optimus.dev/job'] === job);
    const allRunning = (job: string) => {
      const pods = podsOf(job);
      return pods.length >= 3 && pods.every((p) => p.status?.phase === 'Running');
    };
    await until(() => allRunning('gpu') && allRunning('plain'), 20_000);

    const where = (job: string, role: string) =>
      podsOf(job)
        .filter((p) => p.metadata?.labels?.['optimus.dev/role'] === role)
        .map((p) => p.spec?.nodeName);
    expect(new Set([...where('gpu', 'ps'), ...where('gpu', 'scheduler')])).toEqual(new Set(['cpu-a']));
    for (const node of where('gpu', 'worker')) expect(node).toMatch(/^gpu-/);
    for (const node of [...where('plain', 'ps'), ...where('plain', 'worker'), ...where('plain', 'scheduler')])
      expect(['cpu-a', 'cpu-b']).toContain(node);
  }, 40_000);
});

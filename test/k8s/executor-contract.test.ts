import type { V1Pod } from '@kubernetes/client-node';
import { WatchedList } from '../../controller/src/k8s/api/watched-list';
import type { ExecutorHarness, RunningJob } from '../contracts/executor-contract';
import { CONTRACT_SERVERS, describeExecutorContract } from '../contracts/executor-contract';
import { createExecutor } from '../../controller/src/k8s/rollout/executor-factory';
import { splitJobId } from '../../controller/src/k8s/api/names';
import type { TaskPlacement } from '../../controller/src/scheduling/types';
import { startTestCluster } from './cluster-fixture';

async function makeHarness(): Promise<ExecutorHarness> {
  const cluster = await startTestCluster(CONTRACT_SERVERS);
  // The executor reads and waits on the pod informer's cache, as in the controller.
  const pods = new WatchedList<V1Pod>({
    config: cluster.clients.config,
    path: '/api/v1/pods',
    list: () => cluster.clients.core.listPodForAllNamespaces(),
  });
  await pods.start();
  const { executor } = createExecutor({
    clients: cluster.clients,
    pods,
    recheckMs: 50,
    timings: { startTimeoutMs: 5000, unschedulableGraceMs: 0, stopSlackMs: 5000, checkpointReportLagMs: 200 },
  });
  const idle = () =>
    cluster
      .pods()
      .every(
        (p) =>
          !p.metadata?.deletionTimestamp &&
          ['Running', 'Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
      );
  return {
    executor,
    submit: async (job) => {
      const id = splitJobId(job.id)!;
      await cluster.submit({
        namespace: id.namespace,
        name: id.name,
        mode: job.mode,
        psDemand: job.psDemand,
        workerDemand: job.workerDemand,
      });
    },
    settle: async () => {
      for (let i = 0; i < 200 && !idle(); i++) await new Promise((r) => setTimeout(r, 10));
    },
    running: async (jobId): Promise<RunningJob | null> => {
      const id = splitJobId(jobId)!;
      const pods = cluster
        .pods(id.namespace)
        .filter(
          (p) =>
            p.metadata?.labels?.['optimus.dev/job'] === id.name &&
            p.status?.phase === 'Running' &&
            !p.metadata.deletionTimestamp,
        );
      const placement: TaskPlacement[] = pods
        .filter((p) => p.metadata?.labels?.['optimus.dev/role'] !== 'scheduler')
        .map((p) => ({
          role: p.metadata!.labels!['optimus.dev/role'] as 'ps' | 'worker',
          index: Number(p.metadata!.labels!['optimus.dev/index']),
          server: p.spec!.nodeName!,
        }));
      if (placement.length === 0) return null;
      return {
        shape: {
          ps: placement.filter((p) => p.role === 'ps').length,
          workers: placement.filter((p) => p.role === 'worker').length,
        },
        placement,
      };
    },
    restarts: async (jobId) => {
      const id = splitJobId(jobId)!;
      return (await cluster.job(id.namespace, id.name)).status?.restarts ?? 0;
    },
    close: async () => {
      await pods.stop();
      await cluster.close();
    },
  };
}

describeExecutorContract('kubernetes', makeHarness);

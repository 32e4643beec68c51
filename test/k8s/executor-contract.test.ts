/**
 * The executor contract on Kubernetes: the backend's leader-only executor (its steps carried out as
 * plan actions for now, `k8s/rollout/plan-steps.ts`) against the API double, observed from the
 * informer caches as the runtime observes it. The controller restarts with the backend built anew
 * over the same cluster.
 */
import type { KubernetesBackend } from '../../controller/src/k8s';
import type { ExecutorHarness } from '../contracts/executor-contract';
import { CONTRACT_SERVERS, describeExecutorContract } from '../contracts/executor-contract';
import { startBackend, until } from './backend-fixture';
import { startTestCluster } from './cluster-fixture';

async function makeHarness(): Promise<ExecutorHarness> {
  const cluster = await startTestCluster(CONTRACT_SERVERS);
  const known = new Set<string>();
  let k: KubernetesBackend;
  const open = async (): Promise<void> => {
    k = startBackend(cluster, 'controller-0');
    await k.start();
    await until(() => k.leader.isLeader());
    await until(() => [...known].every((id) => k.jobs.list().some((e) => e.id === id)));
  };
  await open();
  const idle = () =>
    cluster
      .pods()
      .every(
        (p) =>
          !p.metadata?.deletionTimestamp &&
          ['Running', 'Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
      );
  return {
    get executor() {
      return k.executor;
    },
    stepsAsPlans: true,
    observe: () => Promise.resolve(k.observe()),
    submit: async (job) => {
      const id = `${job.namespace}/${job.name}`;
      await cluster.submit({
        namespace: job.namespace,
        name: job.name,
        mode: job.mode,
        psDemand: job.psDemand,
        workerDemand: job.workerDemand,
      });
      known.add(id);
      await until(() => k.jobs.list().some((e) => e.id === id));
    },
    settle: async () => {
      for (let i = 0; i < 200 && !idle(); i++) await new Promise((r) => setTimeout(r, 10));
      // The informer caches catch up with what the double did.
      await new Promise((r) => setTimeout(r, 50));
    },
    restartController: async () => {
      await k.stop();
      await open();
    },
    close: async () => {
      await k.stop();
      await cluster.close();
    },
  };
}

describeExecutorContract('kubernetes', makeHarness);

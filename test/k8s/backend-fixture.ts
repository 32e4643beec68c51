/** A Kubernetes backend of the controller wired to a test cluster, with short timings. */
import { loadConfig } from '../../controller/src/config/env';
import { createKubernetesBackend } from '../../controller/src/k8s';
import type { KubernetesBackend, KubernetesBackendOptions } from '../../controller/src/k8s';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import {
  type KubernetesRun,
  type KubernetesRunOptions,
  runKubernetes,
} from '../../controller/src/k8s/run-kubernetes';
import type { ExecutionResult } from '../../controller/src/planning/types';
import type { JobEnd } from '../../controller/src/runtime/backend';
import type { TestCluster } from './cluster-fixture';

/** The controller's calls carry this token; the tests' own calls carry `test-token`. */
export const CONTROLLER_TOKEN = 'controller-token';

export function startBackend(
  cluster: TestCluster,
  identity = 'controller-0',
  extra: Partial<KubernetesBackendOptions> = {},
): KubernetesBackend {
  return createKubernetesBackend({
    config: kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN),
    namespace: 'optimus-system',
    identity,
    leaderElection: { leaseDurationSec: 1, renewDeadlineMs: 800, retryPeriodMs: 100 },
    executor: {
      recheckMs: 50,
      timings: {
        startTimeoutMs: 5000,
        unschedulableGraceMs: 0,
        stopSlackMs: 5000,
        checkpointReportLagMs: 200,
      },
    },
    ...extra,
  });
}

/**
 * The whole controller (`optimus kubernetes run`'s composition root) against the test cluster and
 * `brokerUrl`, quiet, with rounds only on events (the scheduling period is an hour).
 */
export function startRun(
  cluster: TestCluster,
  brokerUrl: string,
  o: { identity?: string; store?: KubernetesRunOptions['store']; env?: Record<string, string> } = {},
): Promise<KubernetesRun> {
  return runKubernetes({
    cfg: loadConfig({
      OPTIMUS_BROKER_URL: brokerUrl,
      OPTIMUS_HTTP_PORT: '0',
      // These tests are about scheduling, not the API's token (test/k8s/api-token.test.ts is).
      OPTIMUS_API_INSECURE_NO_TOKEN: 'true',
      POD_NAME: o.identity ?? 'controller-0',
      POD_NAMESPACE: 'optimus-system',
      OPTIMUS_SCHEDULING_INTERVAL_SEC: '3600',
      // Two samples: the scenarios here crash and resize inside a pre-run.
      OPTIMUS_PRE_RUN_BUDGET: '2',
      OPTIMUS_LOG_LEVEL: 'silent',
      ...o.env,
    }),
    kubeConfig: kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN),
    ...(o.store ? { store: o.store } : {}),
  });
}

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * What the runtime does once a job's program exits: the end observed from the pod cache, then the
 * executor's `finish` (status first, then the pods, at once: there is nothing left to checkpoint).
 */
export async function finishExited(
  backend: KubernetesBackend,
  jobId: string,
): Promise<{ end: JobEnd; result: ExecutionResult }> {
  const exited = () => backend.observe().jobs.get(jobId)?.exited ?? null;
  await until(() => exited() !== null);
  const end = exited()!;
  const result = await backend.executor.execute({
    actions: [{ kind: 'finish', jobId, ...end, checkpoint: false }],
  });
  return { end, result };
}

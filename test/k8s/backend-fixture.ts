/** A Kubernetes backend of the controller wired to a test cluster, with short timings. */
import { createKubernetesBackend } from '../../controller/src/k8s';
import type { KubernetesBackend, KubernetesBackendOptions } from '../../controller/src/k8s';
import { kubeConfigFor } from '../../controller/src/k8s/kube-config';
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
      pollIntervalMs: 10,
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

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

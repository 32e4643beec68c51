/**
 * The job-admission rules of Kubernetes mode, from the configuration: which pod security checks the
 * admin allows, which Secrets are the controller's, which namespace is its own, and the jobs outside
 * the namespaces it runs (told why). Composed here so the composition root only wires them.
 */
import type { ControllerConfig } from '../config/env';
import { admissionProblem, controllerNamespaceProblem, type AdmissionProblem } from './api/job-admission';
import { podSecurityPolicy } from './api/pod-security';
import { jobBrokerSecretName } from './broker/broker-credentials';
import type { Rejection } from './job-feed';
import type { JobEntry } from './observe/job-source';
import type { NamespaceScope } from './observe/namespace-scope';

/** The check `syncJobs` runs on every valid job before it reaches the runtime. */
export function admissionRules(
  cfg: Pick<ControllerConfig, 'podNamespace' | 'podSecurityAllow' | 'sidecarCredentialsSecret'>,
): (e: Extract<JobEntry, { valid: true }>) => AdmissionProblem | null {
  const rules = {
    controllerNamespace: cfg.podNamespace,
    policy: podSecurityPolicy({
      allow: cfg.podSecurityAllow,
      sidecarCredentialsSecret: cfg.sidecarCredentialsSecret,
      jobSecretName: jobBrokerSecretName,
      jobSecretSuffix: jobBrokerSecretName(''),
    }),
  };
  return (e) =>
    admissionProblem({ namespace: e.job.metadata.namespace, name: e.job.metadata.name }, e.spec, rules);
}

/**
 * Jobs in namespaces this controller does not run, each with what the admin can do about it; one in
 * the controller's own namespace is refused for good, whatever its labels.
 */
export function outOfScope(
  entries: readonly JobEntry[],
  scope: NamespaceScope,
  controllerNamespace: string | undefined,
): Rejection[] {
  return entries.flatMap((e): Rejection[] => {
    const ns = e.job.metadata.namespace;
    const home = scope.includes(ns) ? null : controllerNamespaceProblem(ns, controllerNamespace);
    if (home) return [{ id: e.id, error: home.error, reason: home.reason }];
    const why = scope.whyNot(ns);
    return why === null || e.job.status?.phase === 'Succeeded' || e.job.status?.phase === 'Failed'
      ? []
      : [{ id: e.id, error: why, reason: 'NamespaceNotEnabled' as const }];
  });
}

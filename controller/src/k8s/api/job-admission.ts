/**
 * Whether the controller may run a job at all, before anything of it is built (issue 28): never in
 * the controller's own namespace (its Secrets, its broker admin, its API token live there), and only
 * with pod templates that meet the Pod Security *baseline* and lend none of the controller's rights
 * (see `pod-security.ts`). Pure.
 */
import type { OptimusJobSpec } from './optimus-job';
import { podTemplateViolations, type PodSecurityPolicy, type PodSecurityViolation } from './pod-security';

export type AdmissionProblem =
  | { readonly reason: 'ControllerNamespace'; readonly error: string }
  | {
      readonly reason: 'PodSecurity';
      readonly error: string;
      readonly violations: readonly PodSecurityViolation[];
    };

export interface AdmissionRules {
  /** The controller's own namespace; absent outside a cluster (tests). */
  readonly controllerNamespace: string | undefined;
  readonly policy: PodSecurityPolicy;
}

/** A job in the controller's own namespace, refused for good (names and namespaces cannot change). */
export function controllerNamespaceProblem(
  namespace: string,
  controllerNamespace: string | undefined,
): Extract<AdmissionProblem, { reason: 'ControllerNamespace' }> | null {
  if (controllerNamespace === undefined || namespace !== controllerNamespace) return null;
  return {
    reason: 'ControllerNamespace',
    error: `jobs may not run in ${namespace}, the controller's own namespace (its Secrets live there); create it in another namespace`,
  };
}

/** The first reason the job may not run, or null. The message names every offending field. */
export function admissionProblem(
  job: { readonly namespace: string; readonly name: string },
  spec: OptimusJobSpec,
  rules: AdmissionRules,
): AdmissionProblem | null {
  const home = controllerNamespaceProblem(job.namespace, rules.controllerNamespace);
  if (home) return home;
  const violations = Object.entries(spec.replicaSpecs).flatMap(([type, rs]) =>
    rs
      ? podTemplateViolations(
          rs.template as unknown as Parameters<typeof podTemplateViolations>[0],
          `spec.replicaSpecs.${type}.template`,
          {
            namespace: job.namespace,
            job: job.name,
            policy: rules.policy,
          },
        )
      : [],
  );
  if (violations.length === 0) return null;
  const list = violations.map((v) => `${v.field} (${v.check}: ${v.message})`).join('; ');
  return {
    reason: 'PodSecurity',
    error: `the pod templates break the Pod Security baseline the controller enforces: ${list}. A cluster admin may allow a check in the chart's podSecurity.allow`,
    violations,
  };
}

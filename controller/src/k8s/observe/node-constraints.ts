/**
 * What a job's pod templates say about where their pods may run (nodeSelector, required node
 * affinity, tolerations), handed to the policy so that it never pins a task to a node the real
 * scheduler would refuse it (the pod would stay Pending and the rollout time out, round after
 * round). A PS carries its job's scheduler pod's constraint too: that pod sits on PS 0's node.
 * Preferred terms and pod (anti-)affinity only steer the scheduler among admitted nodes: they are
 * not constraints here. Pure.
 */
import type { V1PodSpec } from '@kubernetes/client-node';
import type { JobSpecInput } from '../../runtime/job-spec';
import type { OptimusJobSpec } from '../api/optimus-job';
import { templateOf } from '../api/optimus-job';

type NodeConstraints = NonNullable<JobSpecInput['nodeConstraints']>;
type Constraint = NonNullable<NodeConstraints['ps']>[number];

/** The node constraint of one pod spec; `{}` still keeps the pod off tainted nodes. */
export function constraintOf(spec: V1PodSpec): Constraint {
  const terms =
    spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const requirement = (r: { key: string; operator: string; values?: string[] }) => ({
    key: r.key,
    operator: r.operator as 'In',
    ...(r.values ? { values: r.values } : {}),
  });
  return {
    ...(spec.nodeSelector && Object.keys(spec.nodeSelector).length > 0
      ? { nodeSelector: spec.nodeSelector }
      : {}),
    ...(terms
      ? {
          terms: terms.map((t) => ({
            ...(t.matchExpressions ? { matchExpressions: t.matchExpressions.map(requirement) } : {}),
            ...(t.matchFields ? { matchFields: t.matchFields.map(requirement) } : {}),
          })),
        }
      : {}),
    ...(spec.tolerations?.length
      ? {
          tolerations: spec.tolerations.map((t) => ({
            ...(t.key !== undefined ? { key: t.key } : {}),
            ...(t.operator !== undefined ? { operator: t.operator as 'Equal' } : {}),
            ...(t.value !== undefined ? { value: t.value } : {}),
            ...(t.effect !== undefined ? { effect: t.effect as 'NoSchedule' } : {}),
          })),
        }
      : {}),
  };
}

/** Per role, from the job's templates (the runtime's schema validates the result). */
export function nodeConstraintsOf(spec: OptimusJobSpec): NodeConstraints {
  const ps = constraintOf(templateOf(spec, 'ps').spec);
  const scheduler = constraintOf(templateOf(spec, 'scheduler').spec);
  const same = JSON.stringify(ps) === JSON.stringify(scheduler);
  return { ps: same ? [ps] : [ps, scheduler], worker: [constraintOf(templateOf(spec, 'worker').spec)] };
}

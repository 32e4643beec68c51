/**
 * Transitional (ADR 0035): the runtime's rollout steps carried out by the plan executor, one plan
 * action per step — until the Kubernetes executor steps itself. Each step becomes the one action
 * that moves the job to its target (a resize, a suspend, a replaced worker, a finish, a start).
 */
import type { PlanAction } from '../../planning/types';
import type { Executor, StepOutcome, StepRequest } from '../../runtime/backend';
import { currentOf } from '../../runtime/observation';
import { shapeOf } from '../../runtime/rollout/target';
import type { PlanExecutor } from './executor';

function actionOf(r: StepRequest): PlanAction | null {
  const { target, step, jobId } = r;
  const shape = shapeOf(target);
  const placement = target.tasks.map(({ role, index, server }) => ({ role, index, server }));
  if (step.kind === 'record-end' || target.end) {
    const end = target.end ?? { outcome: 'failed' as const, reason: 'Completed', message: '' };
    return { kind: 'finish', jobId, ...end, checkpoint: target.checkpoint };
  }
  if (!shape) return { kind: 'suspend', jobId, reason: target.reason ?? 'suspended' };
  if (step.kind === 'start') return { kind: 'start', jobId, shape, placement };
  const moved = step.tasks.filter((t) => t.role === 'worker');
  const now = currentOf(r.observed);
  if (step.tasks.length === 1 && moved.length === 1 && now && now.shape.workers === shape.workers) {
    const to = target.tasks.find((t) => t.role === 'worker' && t.index === moved[0]!.index);
    if (to) return { kind: 'replace-worker', jobId, index: to.index, server: to.server };
  }
  return { kind: 'resize', jobId, from: now?.shape ?? shape, shape, placement };
}

export function stepsOverPlans(plans: PlanExecutor): Executor {
  return {
    step: async (r: StepRequest): Promise<StepOutcome> => {
      const action = actionOf(r);
      if (!action) return { kind: 'done' };
      const result = await plans.execute({ actions: [action] }, { generation: r.target.generation });
      const failed = result.failed[0];
      return failed ? { kind: 'failed', error: failed.error } : { kind: 'done', requeueAfterMs: 200 };
    },
  };
}

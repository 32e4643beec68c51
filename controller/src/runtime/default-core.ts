/** The real pure core, wired once for every backend: models, the named policy, the planner. */
import { estimateConvergence } from '../models/convergence/index';
import { chooseSampleShapes, fitSpeedModel } from '../models/speed/index';
import { planChanges } from '../planning/plan';
import { getPolicy } from '../scheduling/registry';
import type { Core } from './core';

/** Builds the core with the policy registered as `policy`; throws listing the names if unknown. */
export function defaultCore(policy: string): Core {
  return {
    policy: getPolicy(policy),
    estimateConvergence: (points, rule) => estimateConvergence(points, rule),
    fitSpeed: (samples, opts) => {
      try {
        return fitSpeedModel(samples, opts);
      } catch {
        return null;
      }
    },
    sampleShapes: (o) => chooseSampleShapes(o).map((s) => ({ ps: s.ps, workers: s.workers })),
    plan: (current, decision) => planChanges(current, decision),
  };
}

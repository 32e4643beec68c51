/** The real pure core, wired once for every backend: models, the named policy, the planner. */
import { estimateConvergence } from '../models/convergence/index';
import { chooseSampleShapes, fitSpeedModel } from '../models/speed/index';
import { planChanges } from '../planning/plan';
import { getPolicy } from '../scheduling/registry';
import type { SpeedModel } from '../models/speed/types';
import type { Policy } from '../scheduling/types';
import type { Core, ModelSource } from './core';

/** Builds the core with the policy registered as `policy`; throws listing the names if unknown. */
export function defaultCore(policy: string): Core {
  return coreOf(getPolicy(policy));
}

/** What a core may take instead of the defaults (the simulator's models, an oracle). */
export interface CoreParts {
  readonly estimateConvergence?: Core['estimateConvergence'];
  readonly fitSpeed?: (...args: Parameters<Core['fitSpeed']>) => SpeedModel | null;
  readonly models?: ModelSource;
}

/** The core around a policy object: the project's models unless others are given. */
export function coreOf(policy: Policy, parts: CoreParts = {}): Core {
  const fit = parts.fitSpeed ?? fitSpeedModel;
  return {
    policy,
    ...(parts.models ? { models: parts.models } : {}),
    estimateConvergence: parts.estimateConvergence ?? ((points, rule) => estimateConvergence(points, rule)),
    fitSpeed: (samples, opts) => {
      try {
        return fit(samples, opts);
      } catch {
        return null;
      }
    },
    // No budget, no pre-run (the oracle knows every model).
    sampleShapes: (o) =>
      o.budget < 1 ? [] : chooseSampleShapes(o).map((s) => ({ ps: s.ps, workers: s.workers })),
    plan: (current, decision) => planChanges(current, decision),
  };
}

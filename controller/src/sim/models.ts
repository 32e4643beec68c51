/**
 * Wires the project's estimation models into the simulator (imported, never copied): the convergence
 * estimator, the speed-model fit, and the pre-run shape chooser.
 */
import { estimateConvergence } from '../models/convergence';
import { chooseSampleShapes, fitSpeedModel } from '../models/speed';
import type { JobShape } from '../scheduling/types';
import type { EstimationModels } from './estimator';
import type { TraceJob } from './trace';

/** The production estimation models. */
export const productionModels: EstimationModels = {
  estimateConvergence: (points, rule) => estimateConvergence(points, rule),
  fitSpeed: (samples, o) => fitSpeedModel(samples, { mode: o.mode, globalBatch: o.globalBatch }),
};

/** Pre-runs are short runs at small shapes: at most this many PS and workers. */
const PRERUN_MAX = 6;

/** The paper pre-runs 5 shapes; the speed model's chooser picks which (cached per job kind). */
export function prerunShapeChooser(budget = 5): (job: TraceJob) => readonly JobShape[] {
  const cache = new Map<string, readonly JobShape[]>();
  return (job) => {
    const maxPs = Math.min(job.maxPs, PRERUN_MAX);
    const maxWorkers = Math.min(job.maxWorkers, PRERUN_MAX);
    const key = `${job.mode}:${maxPs}:${maxWorkers}`;
    let shapes = cache.get(key);
    if (!shapes) {
      shapes = chooseSampleShapes({ budget, maxPs, maxWorkers, mode: job.mode, seed: 1 });
      cache.set(key, shapes);
    }
    return shapes;
  };
}

/**
 * Wires the project's estimation models into the simulator (imported, never copied): the convergence
 * estimator and the speed-model fit (the runtime's core brings the pre-run shape chooser).
 */
import { estimateConvergence } from '../models/convergence';
import { fitSpeedModel } from '../models/speed';
import type { EstimationModels } from './estimator';

/** The production estimation models. */
export const productionModels: EstimationModels = {
  estimateConvergence: (points, rule) => estimateConvergence(points, rule),
  fitSpeed: (samples, o) => fitSpeedModel(samples, { mode: o.mode, globalBatch: o.globalBatch }),
};

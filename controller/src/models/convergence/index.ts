/**
 * Public API of the convergence model (paper §3.1, Eq. 1). Pure: no I/O, no clock.
 *
 * `estimateConvergence(points, rule)` cleans the (step, loss) history (paper outlier rule, normalisation,
 * down-sampling of long histories), cuts it after the last learning-rate drop, fits
 * l(k) = 1/(β0·k + β1) + β2 (β ≥ 0, exact least squares on the loss by variable projection), applies the
 * convergence rule to the fitted curve's epoch means (or an exponential's, when it explains the loss far
 * better — ADR 0020), and returns the predicted total steps with a prediction
 * interval — or `insufficient-data` with a reason instead of a guess.
 *
 * @example
 * const est = estimateConvergence(points, { stepsPerEpoch: 500, threshold: 0.01, patience: 3 });
 * if (est.status === 'ok') schedule(est.remainingSteps);
 */
export type { ConvergenceEstimate, ConvergenceRule, ExponentialCurve, LossPoint } from './types';
export { fittedLoss } from './fitted-curve';
export type { FittedCurve } from './fitted-curve';
export type { Beta } from './curve';
export { lossCurve, meanLoss } from './curve';
export { estimateConvergence } from './estimate';
export type { EstimateOptions } from './estimate';
export { cleanPoints, downsample, epochMeans, normalise, replaceOutliers } from './preprocess';
export { convergedEpochOf, firstConvergedEpoch } from './rule';
export { detectLastDrop, detectPendingDrop, scanDrops } from './lr-drop';
export { fitEq1 } from './fit';
export { fitEq1Paper } from './fit-paper';

/** The curve that gave an estimate its prediction, evaluated for plots and goodness of fit. */
import { lossCurve } from './curve';
import { rateShapeAt } from './rate-shape';
import type { ExponentialCurve } from './types';

/** What an `ok` estimate says about its curve (raw loss units). */
export interface FittedCurve {
  readonly beta: readonly [number, number, number];
  readonly exponential?: ExponentialCurve;
}

/** Loss at `k` steps past the fitted segment's start: the exponential when it predicted, else Eq. 1. */
export function fittedLoss(fit: FittedCurve, k: number): number {
  const e = fit.exponential;
  return e === undefined ? lossCurve(fit.beta, k) : rateShapeAt({ kind: 'fast', ...e }, k);
}

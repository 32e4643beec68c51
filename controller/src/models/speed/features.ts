/**
 * Feature sets of the speed model. Both paper equations are linear in θ after a reciprocal:
 * sync (Eq. 4):  1/f = θ·[M/w, 1, w/p, w, p]     (step time of the job)
 * async (Eq. 3): w/f = θ·[1, w/p, w, p]          (step time of one worker)
 * Extra term `1/p`: Eq. 2's transfer term 2·(S/p)/(B/w′) with w′ (workers pushing to one PS at the
 * same time) anywhere between 1 and w, i.e. a per-PS cost that does not grow with w (parameter
 * update and serialisation of the PS's share of the model). Candidates drop `p` or `1/p` or both,
 * so cross-validation can prefer the simpler law when the samples cannot support the richer one.
 */
import type { TrainingMode } from './types';

export const FEATURE_NAMES = ['batch/w', '1', 'w/p', 'w', 'p', '1/p'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** A feature set: which terms enter the step-time law. */
export type FeatureSet = readonly FeatureName[];

const SYNC_PAPER: FeatureSet = ['batch/w', '1', 'w/p', 'w', 'p'];
const ASYNC_PAPER: FeatureSet = ['1', 'w/p', 'w', 'p'];

/** The paper's law for the mode (Eq. 4 sync, Eq. 3 async). */
export function paperFeatureSet(mode: TrainingMode): FeatureSet {
  return mode === 'sync' ? SYNC_PAPER : ASYNC_PAPER;
}

function buildCandidates(base: FeatureSet): readonly FeatureSet[] {
  const withoutP = base.filter((f) => f !== 'p');
  return [base, [...base, '1/p'], [...withoutP, '1/p'], withoutP];
}

// Built once: the sets are compared by identity (compiled feature codes are cached per set).
const CANDIDATES = { sync: buildCandidates(SYNC_PAPER), async: buildCandidates(ASYNC_PAPER) } as const;
const DESIGN = { sync: CANDIDATES.sync[2] as FeatureSet, async: CANDIDATES.async[2] as FeatureSet } as const;

/** Candidate laws the best model averages over (the paper law first). */
export function candidateFeatureSets(mode: TrainingMode): readonly FeatureSet[] {
  return CANDIDATES[mode];
}

/** The law the shape chooser designs for: the paper law with the per-PS term instead of `p`. */
export function designFeatureSet(mode: TrainingMode): FeatureSet {
  return DESIGN[mode];
}

/** Sets compiled to numeric codes (index in FEATURE_NAMES): a switch on small ints is what keeps
 *  thousands of refits per second cheap. Keyed by the set array itself (sets are constants). */
const compiled = new WeakMap<FeatureSet, Int8Array>();

/** The numeric codes of a feature set (cached; pass them to {@link writeFeatures} in hot loops). */
export function codesOf(set: FeatureSet): Int8Array {
  let codes = compiled.get(set);
  if (!codes) {
    codes = Int8Array.from(set, (name) => FEATURE_NAMES.indexOf(name));
    compiled.set(set, codes);
  }
  return codes;
}

/** Writes the features of a shape into `out` at `offset` (no allocation: the fits call this a lot). */
export function writeFeatures(
  set: FeatureSet | Int8Array,
  ps: number,
  workers: number,
  batch: number,
  out: Float64Array,
  offset: number,
): void {
  const codes = set instanceof Int8Array ? set : codesOf(set);
  for (let i = 0; i < codes.length; i++) {
    let v: number;
    switch (codes[i]) {
      case 0:
        v = batch / workers;
        break;
      case 1:
        v = 1;
        break;
      case 2:
        v = workers / ps;
        break;
      case 3:
        v = workers;
        break;
      case 4:
        v = ps;
        break;
      default:
        v = 1 / ps;
    }
    out[offset + i] = v;
  }
}

/** The feature row of a shape. `batch` is the global batch M (sync); 1 when unknown (θ absorbs it). */
export function featureRow(set: FeatureSet, ps: number, workers: number, batch = 1): Float64Array {
  const row = new Float64Array(set.length);
  writeFeatures(set, ps, workers, batch, row, 0);
  return row;
}

/** The linear target of a speed: sync → job step time 1/f; async → one worker's step time w/f. */
export function stepTimeOf(mode: TrainingMode, stepsPerSec: number, workers: number): number {
  return mode === 'sync' ? 1 / stepsPerSec : workers / stepsPerSec;
}

/** Inverse of {@link stepTimeOf}: job steps per second from the modelled step time. */
export function speedOf(mode: TrainingMode, stepTime: number, workers: number): number {
  return mode === 'sync' ? 1 / stepTime : workers / stepTime;
}

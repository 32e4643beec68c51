/**
 * `simulate --sensitivity`: every JCT ratio to Optimus again at other values of the two settings the
 * ratios depend on most and no workload fixes — the restart pause a resize costs (0, 30 and 120 s;
 * issue 26: "the restart pause alone moves the DRF ratio from 2.19× to 1.67×") and the relative
 * noise of each logged speed (5% and 20%) — on the same workloads, seeds and policies. A pause is
 * varied at the run's noise, a noise at the run's pause; the run itself is the default column.
 */
import {
  comparisonReport,
  runEvaluation,
  type EvaluationOptions,
  type Variant,
  type VariantResult,
} from './evaluate';
import { RECORD_SPEED_NOISE } from './sim-trainer';

export const SENSITIVITY_PAUSES_SEC = [0, 30, 120] as const;
export const SENSITIVITY_SPEED_NOISES = [0.05, 0.2] as const;

export interface SensitivitySetting {
  readonly restartPauseSec: number;
  readonly speedNoise: number;
}

/** One setting's figures: per policy its avg JCT, its ratio to Optimus and the per-seed range. */
export interface SensitivityRow extends SensitivitySetting {
  /** Which knob this row varies ('default': the run the report is about). */
  readonly varies: 'default' | 'restartPauseSec' | 'speedNoise';
  readonly avgJct: Record<string, number>;
  readonly jct: Record<string, number>;
  readonly jctRatioRange: Record<string, { min: number; max: number }>;
  readonly failed: Record<string, string>;
}

export interface SensitivityReport {
  readonly rows: readonly SensitivityRow[];
}

/** The settings to run besides `base`: every pause at base's noise, every noise at base's pause. */
export function sensitivitySettings(
  base: SensitivitySetting,
): { setting: SensitivitySetting; varies: SensitivityRow['varies'] }[] {
  const out: { setting: SensitivitySetting; varies: SensitivityRow['varies'] }[] = [];
  for (const restartPauseSec of SENSITIVITY_PAUSES_SEC)
    out.push({ setting: { ...base, restartPauseSec }, varies: 'restartPauseSec' });
  for (const speedNoise of SENSITIVITY_SPEED_NOISES)
    out.push({ setting: { ...base, speedNoise }, varies: 'speedNoise' });
  return out;
}

const same = (a: SensitivitySetting, b: SensitivitySetting) =>
  a.restartPauseSec === b.restartPauseSec && a.speedNoise === b.speedNoise;

/** The base setting of evaluation options (the simulator's defaults where they give none). */
export function baseSetting(
  o: Pick<EvaluationOptions, 'restartPauseSec' | 'speedNoise'>,
): SensitivitySetting {
  return { restartPauseSec: o.restartPauseSec ?? 30, speedNoise: o.speedNoise ?? RECORD_SPEED_NOISE };
}

function rowOf(
  o: EvaluationOptions,
  setting: SensitivitySetting,
  varies: SensitivityRow['varies'],
  run: { results: ReadonlyMap<string, VariantResult>; failed: ReadonlyMap<string, string> },
): SensitivityRow {
  const bound = { makespanBound: 1, lastArrival: 0, jctBound: 1 };
  const doc = comparisonReport(
    { workload: o.workload, seeds: o.seeds, estimation: 'online', bound, failed: run.failed },
    run.results,
  );
  return {
    ...setting,
    varies,
    avgJct: Object.fromEntries(Object.entries(doc.policies).map(([k, f]) => [k, f.avgJct])),
    jct: Object.fromEntries(Object.entries(doc.ratios).map(([k, r]) => [k, r.jct])),
    jctRatioRange: doc.jctRatioRange,
    failed: doc.failed,
  };
}

/**
 * Runs `variants` at every sensitivity setting; the base run's results are given (not run again),
 * and a setting equal to the base reuses them.
 */
export async function runSensitivity(
  o: EvaluationOptions,
  variants: readonly Variant[],
  baseRun: { results: ReadonlyMap<string, VariantResult>; failed: ReadonlyMap<string, string> },
): Promise<SensitivityReport> {
  const base = baseSetting(o);
  const rows: SensitivityRow[] = [rowOf(o, base, 'default', baseRun)];
  for (const { setting, varies } of sensitivitySettings(base)) {
    const run = same(setting, base) ? baseRun : await runEvaluation({ ...o, ...setting }, variants);
    rows.push(rowOf(o, setting, varies, run));
  }
  return { rows };
}

/** TF1 Estimator hooks: `loss = 0.12, step = 100 (0.812 sec)`, `global_step/sec: 12.3`, `Loss for final step`. */
import { type LineParser, type ParseResult, num, parsed, putMetric } from './types';

const LOSS_STEP = /loss = (\S+?),\s*step = (\d+)(?:\s*\(([\d.eE+-]+) sec\))?/;
const STEPS_PER_SEC = /global_step\/sec:\s*(\S+)/;
const FINAL = /Loss for final step:\s*(\S+?)\.?\s*$/;

/** Creates the TF Estimator parser. */
export function tfEstimatorParser(): LineParser {
  return { framework: 'tf-estimator', parse };
}

function parse(line: string): ParseResult {
  if (line.includes('step = ')) {
    const m = LOSS_STEP.exec(line);
    if (m === null) return null;
    const metrics: Record<string, number> = {};
    putMetric(metrics, 'loss', num(m[1] ?? ''));
    const interval = m[3] === undefined ? NaN : Number(m[3]);
    return parsed('tf-estimator', 'batch', {
      batch: Number(m[2]),
      metrics,
      intervalSec: Number.isFinite(interval) ? interval : null,
      combine: 'merge',
    });
  }
  if (line.includes('global_step/sec')) {
    const m = STEPS_PER_SEC.exec(line);
    const rate = m === null ? NaN : num(m[1] ?? '');
    if (!(rate > 0) || !Number.isFinite(rate)) return null;
    return parsed('tf-estimator', 'batch', { stepTime: 1 / rate, combine: 'merge' });
  }
  if (line.includes('Loss for final step')) {
    const m = FINAL.exec(line);
    if (m === null) return null;
    const metrics: Record<string, number> = {};
    putMetric(metrics, 'loss', num(m[1] ?? ''));
    return parsed('tf-estimator', 'epoch', { metrics });
  }
  return null;
}

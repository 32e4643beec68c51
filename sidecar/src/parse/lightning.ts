/** PyTorch Lightning tqdm bars: `Epoch 0:  45%|████▌ | 422/938 [00:05<00:06, 80.4it/s, v_num=0, train_loss=0.123]`. */
import { type LineParser, type ParseResult, num, parsed, putMetric } from './types';

const BAR = /Epoch (\d+):.*?\|\s*(\d+)\/(\d+|\?)\s*\[([^\]]*)\]/;
const RATE = /^\s*([\d.eE+-]+)\s*(it\/s|s\/it)\s*$/;
const NOT_METRICS = new Set(['v_num']);

/** Creates the Lightning parser. */
export function lightningParser(): LineParser {
  return { framework: 'lightning', parse };
}

function parse(line: string): ParseResult {
  if (!line.includes('Epoch ') || !line.includes('|')) return null;
  const m = BAR.exec(line);
  if (m === null) return null;
  const metrics: Record<string, number> = {};
  let stepTime: number | null = null;
  for (const part of (m[4] ?? '').split(',')) {
    const r = RATE.exec(part);
    if (r !== null) {
      const v = Number(r[1]);
      if (v > 0) stepTime = r[2] === 'it/s' ? 1 / v : v;
      continue;
    }
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    if (eq > 0 && !NOT_METRICS.has(name)) putMetric(metrics, name, num(part.slice(eq + 1).trim()));
  }
  const step = Number(m[2]);
  return parsed('lightning', m[3] === String(step) ? 'epoch' : 'batch', {
    epoch: Number(m[1]),
    batch: step,
    stepTime,
    metrics,
    combine: 'replace',
  });
}

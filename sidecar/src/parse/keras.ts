/**
 * Keras progress bars (Keras 3 `━━━` and Keras 2 `[====>...]`): `Epoch 3/10` sets the epoch, then
 * `12/100 ━━━━ 1s 10ms/step - accuracy: 0.9000 - loss: 0.3100` lines redraw with `\r`; Keras 2's
 * `verbose=2` prints one line per epoch, `500/500 - 21s - loss: 0.2512 - 21s/epoch - 42ms/step`.
 * A TF 2.x ParameterServerStrategy job prints them on its coordinator (chief) only.
 * Epochs are reported 0-based like MXNet's (`Epoch 1/10` is epoch 0).
 */
import { type LineParser, type ParseResult, num, parsed, putMetric, RECOGNIZED } from './types';

const EPOCH = /Epoch (\d+)\/(\d+)\s*$/;
const PROGRESS = /(\d+)\/(\d+)\s.*?(?:(\d+(?:\.\d+)?)(s|ms|us|µs)\/step)?((?:\s-\s[\w.]+:\s*\S+)*)\s*$/;
const METRIC = /\s-\s([\w.]+):\s*(\S+)/g;
const UNIT_SEC: Record<string, number> = { s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6 };

/** Creates a Keras parser; it remembers the current epoch. */
export function kerasParser(): LineParser {
  let epoch: number | null = null;
  return {
    framework: 'keras',
    parse(line: string): ParseResult {
      if (line.includes('Epoch ')) {
        const e = EPOCH.exec(line);
        if (e !== null) {
          epoch = Math.max(0, Number(e[1]) - 1);
          return RECOGNIZED;
        }
      }
      if (!line.includes('/step') && !line.includes(' - ')) return null;
      const m = PROGRESS.exec(line);
      if (m === null) return null;
      const metrics: Record<string, number> = {};
      // Keras 2's `verbose=2` epoch line puts its metrics before the times
      // (`500/500 - 21s - loss: 0.2512 - 21s/epoch - 42ms/step`): read them wherever they stand.
      const tail = m[5] !== undefined && m[5] !== '' ? m[5] : line.slice(m.index);
      for (const mm of tail.matchAll(METRIC)) {
        if (mm[1] !== 'ETA') putMetric(metrics, mm[1] ?? '', num(mm[2] ?? ''));
      }
      if (m[3] === undefined && Object.keys(metrics).length === 0) return null;
      const step = Number(m[1]);
      const total = Number(m[2]);
      const unit = UNIT_SEC[m[4] ?? ''] ?? 1;
      return parsed('keras', step === total ? 'epoch' : 'batch', {
        epoch,
        batch: step,
        stepTime: m[3] === undefined ? null : Number(m[3]) * unit,
        metrics,
        combine: 'replace',
      });
    },
  };
}

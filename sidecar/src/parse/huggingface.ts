/** HuggingFace Trainer logs: a Python dict repr such as `{'loss': 0.69, 'learning_rate': 4.5e-05, 'epoch': 0.5}`. */
import { type LineParser, type ParseResult, num, parsed, putMetric } from './types';

const ENTRY = /'([^']{1,128})':\s*([-+\w.]+)/g;

/** Creates the HuggingFace Trainer parser. */
export function huggingfaceParser(): LineParser {
  return { framework: 'huggingface', parse };
}

function parse(line: string): ParseResult {
  const open = line.indexOf("{'");
  if (open < 0 || !line.includes('}', open)) return null;
  const metrics: Record<string, number> = {};
  let seen = 0;
  for (const m of line.slice(open).matchAll(ENTRY)) {
    seen++;
    putMetric(metrics, m[1] ?? '', num(m[2] ?? ''));
  }
  if (seen === 0) return null;
  const epochValue = metrics['epoch'];
  const step = metrics['step'];
  const keys = Object.keys(metrics);
  const kind = keys.some((k) => k.startsWith('eval_'))
    ? 'validation'
    : keys.includes('train_runtime')
      ? 'epoch'
      : 'batch';
  const rate = metrics['train_samples_per_second'];
  return parsed('huggingface', kind, {
    epoch: epochValue === undefined || epochValue < 0 ? null : Math.floor(epochValue),
    batch: step === undefined || step < 0 ? null : Math.floor(step),
    samplesPerSec: rate !== undefined && rate >= 0 ? rate : null,
    metrics,
  });
}

/**
 * Our own JSON-lines format, the easy path for any framework:
 * `{"kind":"batch","epoch":0,"step":120,"loss":0.5,"samples_per_sec":512,"step_time":0.25,"metrics":{...}}`.
 * Every field is optional; other top-level numeric fields become metrics. `batch` is an alias of `step`.
 */
import { RECORD_KINDS, type RecordKind } from '../../../shared/src/schemas';
import { type LineParser, type ParseResult, parsed, putMetric } from './types';

const RESERVED = new Set([
  'kind',
  'epoch',
  'step',
  'batch',
  'samples_per_sec',
  'samplesPerSec',
  'step_time',
  'stepTime',
  'metrics',
  'ts',
]);

/** Creates the JSON-lines parser. */
export function jsonlParser(): LineParser {
  return { framework: 'jsonl', parse };
}

const intOrNull = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
const nonNegOrNull = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;

function parse(line: string): ParseResult {
  const open = line.indexOf('{"');
  if (open < 0) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(line.slice(open));
  } catch {
    return null;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return null;
  const o = obj as Record<string, unknown>;
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(o))
    if (!RESERVED.has(k) && typeof v === 'number') putMetric(metrics, k, v);
  if (typeof o['metrics'] === 'object' && o['metrics'] !== null) {
    for (const [k, v] of Object.entries(o['metrics'])) if (typeof v === 'number') putMetric(metrics, k, v);
  }
  const kind = RECORD_KINDS.includes(o['kind'] as RecordKind) ? (o['kind'] as RecordKind) : 'batch';
  return parsed('jsonl', kind, {
    epoch: intOrNull(o['epoch']),
    batch: intOrNull(o['step'] ?? o['batch']),
    samplesPerSec: nonNegOrNull(o['samples_per_sec'] ?? o['samplesPerSec']),
    stepTime: nonNegOrNull(o['step_time'] ?? o['stepTime']),
    metrics,
  });
}

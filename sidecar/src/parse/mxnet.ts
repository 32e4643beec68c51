/**
 * MXNet `Speedometer`, `module.fit` and `model.py` lines, every version (see log-formats.md).
 * Patterns are never anchored at the line start: real logs carry timestamps, `INFO:root:`, `Node[3]`.
 */
import { readEqualsList } from './metric-list';
import {
  type LineParser,
  type ParsedLine,
  num,
  parsed,
  putMetric,
  RECOGNIZED,
  type ParseResult,
} from './types';

const SPEEDOMETER =
  /(?:Epoch|Iter)\[(\d+)\]\s*Batch\s*\[(\d+)(?:-(\d+))?\]\s*Speed:\s*(\S+)\s*samples\/sec(.*)$/;
const ITER_TRAIN = /Iter\[(\d+)\]\s*Batch\s*\[(\d+)\]\s*(Train-.*)$/;
const EPOCH_LINE = /Epoch\[(\d+)\]\s*(Train-|Validation-|Time cost\s*=|Resetting Data Iterator)(.*)$/;
const CHECKPOINT = /Saved checkpoint to\s*"?([^"]*)"?/;
const CHECKPOINT_EPOCH = /-(\d{4,})\.params$/;

/** Creates the MXNet parser (stateless; a factory for symmetry with the stateful ones). */
export function mxnetParser(): LineParser {
  return { framework: 'mxnet', parse: parseMxnet };
}

function parseMxnet(line: string): ParseResult {
  if (line.includes('Speed:')) return speedometer(line);
  if (line.includes('Epoch[')) return epochLine(line);
  if (line.includes('Iter[')) return iterTrain(line);
  if (line.includes('Saved checkpoint')) return checkpoint(line);
  return null;
}

function speedometer(line: string): ParsedLine | null {
  const m = SPEEDOMETER.exec(line);
  if (m === null) return null;
  const metrics: Record<string, number> = {};
  readEqualsList(m[5] ?? '', metrics, 'Train-');
  const speed = num(m[4] ?? '');
  return parsed('mxnet', 'batch', {
    epoch: Number(m[1]),
    batch: Number(m[3] ?? m[2]),
    samplesPerSec: Number.isFinite(speed) && speed >= 0 ? speed : null,
    metrics,
    combine: 'merge',
  });
}

function iterTrain(line: string): ParsedLine | null {
  const m = ITER_TRAIN.exec(line);
  if (m === null) return null;
  const metrics: Record<string, number> = {};
  readEqualsList(m[3] ?? '', metrics, 'Train-');
  return parsed('mxnet', 'batch', { epoch: Number(m[1]), batch: Number(m[2]), metrics, combine: 'merge' });
}

function epochLine(line: string): ParseResult {
  const m = EPOCH_LINE.exec(line);
  if (m === null) return null;
  const epoch = Number(m[1]);
  const what = m[2] ?? '';
  const rest = m[3] ?? '';
  if (what.startsWith('Resetting')) return RECOGNIZED;
  const metrics: Record<string, number> = {};
  if (what.startsWith('Time cost')) {
    putMetric(metrics, 'time-cost', num(rest.trim()));
    return parsed('mxnet', 'epoch', { epoch, metrics, combine: 'merge' });
  }
  readEqualsList(what + rest, metrics, what);
  return parsed('mxnet', what === 'Train-' ? 'epoch' : 'validation', { epoch, metrics, combine: 'merge' });
}

function checkpoint(line: string): ParsedLine | null {
  const m = CHECKPOINT.exec(line);
  if (m === null) return null;
  const e = CHECKPOINT_EPOCH.exec((m[1] ?? '').trim());
  return parsed('mxnet', 'checkpoint', { epoch: e === null ? null : Number(e[1]) });
}

/**
 * What a format parser extracts from one log line, before derivation (step time, loss) and
 * sequencing turn it into a wire record.
 */
import { BOUNDS, inBounds } from '../../../shared/src/bounds';
import type { Framework, RecordKind } from '../../../shared/src/schemas';

export interface ParsedLine {
  framework: Framework;
  kind: RecordKind;
  epoch: number | null;
  batch: number | null;
  samplesPerSec: number | null;
  /** Seconds per step when the line says it directly (Keras `10ms/step`, tqdm `it/s`). */
  stepTime: number | null;
  /** Seconds covered by `intervalBatches` steps (Gluon `time/interval`, TF `(0.812 sec)`). */
  intervalSec: number | null;
  metrics: Record<string, number>;
  /**
   * How a following line with the same kind and epoch combines with this one:
   * `merge` (MXNet prints one metric per line), `replace` (progress bars redraw).
   */
  combine: 'merge' | 'replace' | 'none';
}

/** A line a parser understood that carries no record (e.g. `Epoch 3/10`, `Resetting Data Iterator`). */
export const RECOGNIZED = 'recognized' as const;

/** A record, a recognised non-record line, or null for a line this format does not know. */
export type ParseResult = ParsedLine | typeof RECOGNIZED | null;

/** One format: a cheap prefilter (substring test) guards the regular expressions. */
export interface LineParser {
  readonly framework: Framework;
  parse(line: string): ParseResult;
}

/** Builds a ParsedLine with defaults so parsers list only what they know. */
export function parsed(framework: Framework, kind: RecordKind, fields: Partial<ParsedLine>): ParsedLine {
  return {
    framework,
    kind,
    epoch: null,
    batch: null,
    samplesPerSec: null,
    stepTime: null,
    intervalSec: null,
    metrics: {},
    combine: 'none',
    ...fields,
  };
}

/** Parses a printed number, accepting Python's `nan`/`inf`; returns NaN for garbage (callers drop it). */
export function num(text: string): number {
  // Nearly every figure is a plain number: no lower-cased copy for those (this runs per metric).
  const v = Number(text);
  if (!Number.isNaN(v)) return v;
  const t = text.toLowerCase();
  if (t === 'nan' || t === '-nan') return NaN;
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  return NaN;
}

/**
 * Adds a metric when it is a number inside the wire bounds and the name is usable; long names are cut
 * to the schema limit, and metrics beyond the schema's count are dropped (a record stays valid).
 */
export function putMetric(into: Record<string, number>, name: string, value: number): void {
  const key = name.trim().slice(0, BOUNDS.nameLength.max);
  if (key.length === 0 || !inBounds('value', value)) return;
  if (!(key in into) && atLeast(into, BOUNDS.metricCount.max)) return;
  into[key] = value;
}

/** True when `o` has at least `n` own keys; counts without the array `Object.keys` would allocate. */
function atLeast(o: Record<string, number>, n: number): boolean {
  let k = 0;
  for (const _ in o) if (++k >= n) return true;
  return false;
}

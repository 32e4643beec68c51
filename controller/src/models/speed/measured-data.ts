/**
 * Parser of measured speed tables (`test/data/measured-speeds.csv` and files with its columns).
 * Pure: takes the CSV text; the file-reading wrapper is `controller/src/cli/measured-data-file.ts`.
 * Columns used: model, global_batch, num_ps, num_workers, worker_samples_per_sec (`;`-separated,
 * one value per worker), and optionally kvstore (dist_sync | dist_async; default sync).
 * Rows where any worker's speed is 0 are failed measurements: they are excluded and counted.
 */
import type { SpeedSample, TrainingMode } from './types';

/** One measured shape. */
export interface MeasuredShape {
  readonly ps: number;
  readonly workers: number;
  /** Job speed: sum of the workers' samples/s ÷ global batch. */
  readonly stepsPerSec: number;
  readonly workerSamplesPerSec: readonly number[];
}

/** All measured shapes of one model (a job type). */
export interface MeasuredJob {
  readonly model: string;
  readonly mode: TrainingMode;
  readonly globalBatch: number;
  readonly shapes: readonly MeasuredShape[];
}

export interface MeasuredData {
  readonly jobs: readonly MeasuredJob[];
  /** Rows left out because a worker speed was 0 (failed measurement). */
  readonly excludedRows: number;
}

const REQUIRED = ['model', 'global_batch', 'num_ps', 'num_workers', 'worker_samples_per_sec'] as const;

function positiveInt(text: string, column: string, line: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < 1)
    throw new Error(`line ${line}: ${column} must be a positive integer, got "${text}"`);
  return n;
}

function modeOf(kvstore: string | undefined, line: number): TrainingMode {
  if (kvstore === undefined || kvstore === '') return 'sync';
  if (kvstore.includes('async')) return 'async';
  if (kvstore.includes('sync')) return 'sync';
  throw new Error(`line ${line}: kvstore must be dist_sync or dist_async, got "${kvstore}"`);
}

interface ParsedRow {
  readonly model: string;
  readonly mode: TrainingMode;
  readonly globalBatch: number;
  readonly shape: MeasuredShape | undefined;
}

function parseRow(cells: readonly string[], col: (name: string) => number, line: number): ParsedRow {
  const cell = (name: string): string => (cells[col(name)] ?? '').trim();
  const model = cell('model');
  if (model === '') throw new Error(`line ${line}: model is empty`);
  const kvIndex = col('kvstore');
  const mode = modeOf(kvIndex >= 0 ? (cells[kvIndex] ?? '').trim() : undefined, line);
  const globalBatch = positiveInt(cell('global_batch'), 'global_batch', line);
  const ps = positiveInt(cell('num_ps'), 'num_ps', line);
  const workers = positiveInt(cell('num_workers'), 'num_workers', line);
  const speeds = cell('worker_samples_per_sec')
    .split(';')
    .map((v) => Number(v));
  if (speeds.length !== workers || speeds.some((v) => !Number.isFinite(v) || v < 0)) {
    throw new Error(
      `line ${line}: worker_samples_per_sec must hold ${workers} non-negative numbers, got "${cell('worker_samples_per_sec')}"`,
    );
  }
  if (speeds.some((v) => v === 0)) return { model, mode, globalBatch, shape: undefined };
  const stepsPerSec = speeds.reduce((a, b) => a + b, 0) / globalBatch;
  return { model, mode, globalBatch, shape: { ps, workers, stepsPerSec, workerSamplesPerSec: speeds } };
}

/**
 * Parses the CSV text. Throws an Error naming the line and column of the first bad row.
 * @example parseMeasuredSpeeds(text).jobs.find((j) => j.model === 'resnet-50')
 */
export function parseMeasuredSpeeds(text: string): MeasuredData {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((h) => h.trim());
  const missing = REQUIRED.filter((name) => !header.includes(name));
  if (missing.length > 0) throw new Error(`measured speeds: header lacks column(s) ${missing.join(', ')}`);
  const col = (name: string): number => header.indexOf(name);
  const jobs = new Map<
    string,
    { model: string; mode: TrainingMode; globalBatch: number; shapes: MeasuredShape[] }
  >();
  let excludedRows = 0;
  lines.slice(1).forEach((raw, i) => {
    if (raw.trim() === '') return;
    const row = parseRow(raw.split(','), col, i + 2);
    const job = jobs.get(row.model) ?? {
      model: row.model,
      mode: row.mode,
      globalBatch: row.globalBatch,
      shapes: [],
    };
    if (job.globalBatch !== row.globalBatch || job.mode !== row.mode) {
      throw new Error(`line ${i + 2}: model ${row.model} changes global_batch or kvstore within the file`);
    }
    jobs.set(row.model, job);
    if (row.shape) job.shapes.push(row.shape);
    else excludedRows += 1;
  });
  if (jobs.size === 0) throw new Error('measured speeds: no data rows');
  return { jobs: [...jobs.values()], excludedRows };
}

/** The shapes of a job as speed samples. */
export function samplesOf(job: MeasuredJob): SpeedSample[] {
  return job.shapes.map((s) => ({ ps: s.ps, workers: s.workers, stepsPerSec: s.stepsPerSec }));
}

/** The measured steps/s of a job at exactly (ps, workers), or undefined if that shape was not measured. */
export function measuredSpeedAt(job: MeasuredJob, ps: number, workers: number): number | undefined {
  return job.shapes.find((s) => s.ps === ps && s.workers === workers)?.stepsPerSec;
}

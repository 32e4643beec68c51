/**
 * The simulator's file edge: the measured-speeds table and workloads given by name or as a trace file.
 * (The engine itself does no I/O.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { measuredModelsFromCsv, type MeasuredModel } from './measured-table';
import { measuredPause, restartCostSchema } from './restart-cost';
import { parseTrace, type Trace } from './trace';
import { buildWorkload, isWorkloadName, WORKLOAD_NAMES } from './workloads';

/** The measurements shipped with the repository. */
export const DEFAULT_MEASURED_CSV = fileURLToPath(
  new URL('../../../test/data/measured-speeds.csv', import.meta.url),
);

/** Reads and parses a measured-speeds CSV; the error names the file. */
export function loadMeasured(path = DEFAULT_MEASURED_CSV): Map<string, MeasuredModel> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `cannot read measured speeds "${path}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return measuredModelsFromCsv(text);
}

/** The restart costs measured on the real PyTorch trainers, shipped with the repository. */
export const DEFAULT_RESTART_COST_JSON = fileURLToPath(
  new URL('../../../test/data/restart-cost.json', import.meta.url),
);

/** `--restart-pause measured[:kind]` in seconds, from `path` (`npm run bench:restart -- --out`). */
export function loadMeasuredPause(spec: string, path = DEFAULT_RESTART_COST_JSON): number {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(
      `--restart-pause ${spec}: cannot read "${path}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const doc = restartCostSchema.safeParse(value);
  if (!doc.success) throw new Error(`--restart-pause ${spec}: "${path}" is no restart-cost file`);
  return measuredPause(doc.data, spec);
}

/** Reads a JSON trace file with a clear error for unreadable, non-JSON or invalid content. */
export function loadTrace(path: string): Trace {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `--workload: cannot read trace "${path}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`--workload: "${path}" is not JSON`);
  }
  return parseTrace(value);
}

/**
 * A workload source: built-in names give one workload per seed; a file gives the same trace for
 * every seed; a comma-separated list of files gives seed s the s-th file (cycling), so that the
 * seeds of a run are different workloads (e.g. one imported trace per seed of the source).
 */
export function workloadSource(
  workload: string,
  measured: ReadonlyMap<string, MeasuredModel>,
  jobs?: number,
): (seed: number) => Trace {
  if (isWorkloadName(workload)) {
    return (seed) => buildWorkload(workload, { seed, measured, ...(jobs === undefined ? {} : { jobs }) });
  }
  const files = workload.split(',').filter((f) => f.length > 0);
  if (files.length > 1) {
    const traces = files.map((f) => {
      if (!f.endsWith('.json')) throw new Error(`--workload: "${f}" in the list is not a trace .json file`);
      return loadTrace(f);
    });
    return (seed) => traces[(((seed - 1) % traces.length) + traces.length) % traces.length] as Trace;
  }
  if (!workload.endsWith('.json')) {
    throw new Error(
      `--workload must be one of ${WORKLOAD_NAMES.join(', ')} or a trace .json file, got "${workload}"`,
    );
  }
  const trace = loadTrace(workload);
  return () => trace;
}

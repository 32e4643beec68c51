/**
 * `trace import --from dl2`: the DL2 simulator's workload (Peng et al., pengyanghua/DL2) as an
 * `optimus-trace`. The input is a `dl2-jobs` dump (docs/trace-format.md, "DL2") of one workload
 * DL2's own generator made: Google-trace arrivals per 1,200 s slot, the 8 models of
 * `config_speed.txt`, a fixed number of DL2 "epochs" per model, DL2's cluster of identical nodes.
 *
 * Mapping (each choice is a modelling difference the comparison table lists):
 * - a node has `slotsPerNode` CPU slots and `slotsPerNode` GPU slots, `slotsPerGpu` slots per GPU
 *   (DL2: 8, 8, 4 → 8 cores and 2 GPUs); a task's `[cpu, gpu-slots]` demand maps the same way.
 *   DL2 models no memory, so neither does the imported trace.
 * - DL2 progresses `speed(p, w) · 1200 / epochSize` epochs per slot, `speed` the summed samples/s
 *   of `config_speed.txt`; our speed is that sum ÷ the model's global batch in steps/s, so the
 *   work is `numEpochs · epochSize / globalBatch` steps. Speeds come from our measured table.
 * - DL2 caps PS and workers at `maxTasks` (16) each; we also cap at the largest measured count
 *   (our table does not extrapolate, DL2's RBF interpolation does) unless `speeds` says
 *   otherwise: `table+rbf` (DL2's extrapolation beyond the measured shapes) and `rbf` (DL2's speed
 *   function everywhere) take DL2's cap (`speed.interpolation`; ADR 0028).
 * - our "epoch" (the unit of the loss curve the estimator sees) is `epochsPerEpoch` DL2 epochs
 *   (default 100: a few tens to a few hundred epochs per job).
 */
import { z } from 'zod';
import type { MeasuredModel } from './measured-table';
import type { MeasuredInterpolation, Trace, TraceJob, TraceServer } from './trace';

const GPU = 'nvidia.com/gpu';

const dl2JobSchema = z
  .object({
    id: z.number().int().min(0),
    arrivalSlot: z.number().int().min(0),
    model: z.string().min(1),
    numEpochs: z.number().finite().gt(0),
    epochSize: z.number().finite().gt(0),
    psDemand: z.tuple([z.number().min(0), z.number().min(0)]),
    workerDemand: z.tuple([z.number().min(0), z.number().min(0)]),
  })
  .strict();

export const dl2DumpSchema = z
  .object({
    format: z.literal('dl2-jobs'),
    version: z.literal(1),
    config: z.string(),
    seed: z.number().int(),
    slotSec: z.number().finite().gt(0),
    nodes: z.number().int().min(1),
    slotsPerNode: z.number().int().min(1),
    slotsPerGpu: z.number().int().min(1),
    maxTasks: z.number().int().min(1),
    jobs: z.array(dl2JobSchema).min(1),
  })
  .strict();
export type Dl2Dump = z.infer<typeof dl2DumpSchema>;

export interface Dl2ImportOptions {
  readonly measured: ReadonlyMap<string, MeasuredModel>;
  /** DL2 epochs per epoch of the imported loss curve (default 100). */
  readonly epochsPerEpoch?: number;
  /** The jobs' `speed.interpolation` (default `table`: ours, clamped to the measured shapes). */
  readonly speeds?: MeasuredInterpolation;
}

/** Validates a parsed JSON value as a `dl2-jobs` dump; the error lists the offending paths. */
export function parseDl2Dump(value: unknown): Dl2Dump {
  const r = dl2DumpSchema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new Error(`invalid dl2-jobs dump: ${issues.join('; ')}`);
}

function resources(d: Dl2Dump, [cpu, gpuSlots]: readonly [number, number]): Record<string, number> {
  const out: Record<string, number> = { cpu };
  if (gpuSlots > 0) out[GPU] = gpuSlots / d.slotsPerGpu;
  return out;
}

function servers(d: Dl2Dump): TraceServer[] {
  const capacity = { cpu: d.slotsPerNode, [GPU]: d.slotsPerNode / d.slotsPerGpu };
  const width = String(d.nodes).length;
  return Array.from({ length: d.nodes }, (_, i) => ({
    name: `node-${String(i + 1).padStart(width, '0')}`,
    capacity,
  }));
}

function importJob(d: Dl2Dump, j: Dl2Dump['jobs'][number], o: Dl2ImportOptions): TraceJob {
  const m = o.measured.get(j.model);
  if (!m)
    throw new Error(`dl2 job ${j.id}: no measurements for model "${j.model}" in the measured-speeds table`);
  const perEpoch = o.epochsPerEpoch ?? 100;
  const speeds = o.speeds ?? 'table';
  const cap = speeds === 'table';
  const steps = (j.numEpochs * j.epochSize) / m.globalBatch;
  return {
    id: `dl2/job-${String(j.id).padStart(4, '0')}`,
    arrival: j.arrivalSlot * d.slotSec,
    type: j.model,
    mode: 'sync',
    psDemand: resources(d, j.psDemand),
    workerDemand: resources(d, j.workerDemand),
    minPs: 1,
    maxPs: cap ? Math.min(d.maxTasks, m.maxPs) : d.maxTasks,
    minWorkers: 1,
    maxWorkers: cap ? Math.min(d.maxTasks, m.maxWorkers) : d.maxTasks,
    globalBatch: m.globalBatch,
    stepsPerEpoch: Math.max(1, Math.round((perEpoch * j.epochSize) / m.globalBatch)),
    speed: cap
      ? { kind: 'measured', model: j.model }
      : { kind: 'measured', model: j.model, interpolation: speeds },
    work: { kind: 'steps', steps },
  };
}

/** The dump as an `optimus-trace` (deterministic; jobs in DL2 id order). */
export function importDl2(d: Dl2Dump, o: Dl2ImportOptions): Trace {
  return {
    format: 'optimus-trace',
    version: 1,
    name: `dl2-${d.config}-seed${d.seed}`,
    seed: d.seed,
    cluster: { servers: servers(d) },
    jobs: [...d.jobs].sort((a, b) => a.id - b.id).map((j) => importJob(d, j, o)),
  };
}

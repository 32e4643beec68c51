/**
 * Fixtures of the bounds' tests: a job whose speed is known in closed form and a one-server cluster.
 * async, speed = w steps/s (Eq. 3 θ = [1, 0, 0, 0]): no communication term, so placement cannot help.
 */
import type { Trace, TraceJob } from './trace';

export const parametricJob = (o: Partial<TraceJob> = {}): TraceJob => ({
  id: 'j',
  arrival: 0,
  type: 't',
  mode: 'async',
  psDemand: { cpu: 1 },
  workerDemand: { cpu: 1 },
  minPs: 1,
  maxPs: 4,
  minWorkers: 1,
  maxWorkers: 4,
  globalBatch: 1,
  stepsPerEpoch: 100,
  speed: { kind: 'parametric', theta: [1, 0, 0, 0] },
  work: { kind: 'steps', steps: 400 },
  ...o,
});

export const oneServerTrace = (jobs: TraceJob[], cpus: number): Trace => ({
  format: 'optimus-trace',
  version: 1,
  name: 't',
  seed: 1,
  cluster: { servers: [{ name: 's', capacity: { cpu: cpus } }] },
  jobs,
});

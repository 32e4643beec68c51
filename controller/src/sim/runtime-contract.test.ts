import { describeRuntimeContract, runtimeContractJob } from '../../../test/contracts/runtime-contract';
import { CONTRACT_SERVERS } from '../../../test/contracts/executor-contract';
import { SimBackend } from './sim-backend';
import type { Trace, TraceJob } from './trace';

const NAMES = ['failed-start', 'failed-resize', 'never-confirms', 'meanwhile'];

/** The contract's jobs as trace jobs (the simulated backend admits only what its trace holds). */
const trace: Trace = {
  format: 'optimus-trace',
  version: 1,
  name: 'runtime-contract',
  seed: 1,
  cluster: { servers: CONTRACT_SERVERS.map((s) => ({ name: s.name, capacity: { ...s.capacity } })) },
  jobs: NAMES.map((name): TraceJob => {
    const spec = runtimeContractJob(name);
    return {
      id: `default/${name}`,
      arrival: 0,
      type: 'contract',
      mode: 'sync',
      psDemand: spec.psDemand,
      workerDemand: spec.workerDemand,
      minPs: 1,
      maxPs: 4,
      minWorkers: 1,
      maxWorkers: 4,
      globalBatch: 64,
      stepsPerEpoch: 100,
      speed: { kind: 'parametric', theta: [0.004, 0.1, 0.2, 0.01, 0.01] },
      work: { kind: 'steps', steps: 1e9 },
    };
  }),
};

describeRuntimeContract('simulator', async () => {
  const backend = new SimBackend({
    trace,
    measured: new Map(),
    seed: 1,
    restartPauseSec: 0,
    now: () => Date.now() / 1000,
    wallMs: () => Date.now(),
    sink: () => {},
  });
  return {
    backend,
    inject: (id, fault) =>
      fault ? backend.cluster.faults.set(id, fault) : backend.cluster.faults.delete(id),
    settle: async () => {},
    close: async () => {},
  };
});

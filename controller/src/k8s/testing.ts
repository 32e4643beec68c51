/** Test builders for the Kubernetes backend (imported by tests only). */

/** The smallest valid OptimusJob spec: one CPU per task, up to 4 PS and 4 workers. */
export const minimalJobSpec = {
  mode: 'sync',
  container: { image: 'i', command: ['python'] },
  ps: { resources: { requests: { cpu: '1' } } },
  worker: { resources: { requests: { cpu: '1' } } },
  batchSize: 32,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 4 },
} as const;

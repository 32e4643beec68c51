/** Test builders for the Kubernetes backend (imported by tests only). */

type Quantities = Readonly<Record<string, string | number>>;

/** A pod template with one training container `main` requesting `requests`. */
export function podTemplate(o: {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly requests: Quantities;
  readonly limits?: Quantities;
}) {
  return {
    spec: {
      containers: [
        {
          name: 'main',
          image: o.image ?? 'mxnet/python:1.9.1',
          command: [...(o.command ?? ['python', 'train.py'])],
          ...(o.args ? { args: [...o.args] } : {}),
          resources: { requests: { ...o.requests }, ...(o.limits ? { limits: { ...o.limits } } : {}) },
        },
      ],
    },
  };
}

/** `spec.replicaSpecs` with one PS and one worker template. */
export const replicaSpecs = (ps: Quantities, worker: Quantities, image = 'mxnet/python:1.9.1') => ({
  PS: { template: podTemplate({ image, requests: ps }) },
  Worker: { template: podTemplate({ image, requests: worker }) },
});

/** The smallest valid OptimusJob spec: one CPU per task, up to 4 PS and 4 workers. */
export const minimalJobSpec = {
  mode: 'sync',
  replicaSpecs: replicaSpecs({ cpu: '1' }, { cpu: '1' }, 'i'),
  batchSize: 32,
  convergence: { threshold: 0.02, patience: 2, stepsPerEpoch: 100 },
  scaling: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 4 },
} as const;

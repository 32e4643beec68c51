/**
 * The parts of a `PodTemplateSpec` the controller reads or merges into, checked with zod; every
 * other field passes through untouched (the API server validates the whole pod when the
 * controller creates it). A field the controller merges into must have the right shape, so a
 * template with `volumes: "oops"` is refused with a message instead of producing a broken pod.
 */
import type { V1Container, V1PodTemplateSpec } from '@kubernetes/client-node';
import { z } from 'zod';
import type { Resources } from '../../../../shared/src/units';
import { ANNOTATION_CONTAINER, ANNOTATION_DEFAULT_CONTAINER, KUBEFLOW_CONTAINER_NAMES } from '../api/names';
import { addResources, parseQuantity, parseResources } from '../api/quantity';

export const quantitySchema = z.union([z.string(), z.number()]).refine(
  (q) => {
    try {
      return parseQuantity(q) >= 0;
    } catch {
      return false;
    }
  },
  { message: 'must be a Kubernetes quantity' },
);
const quantities = z.record(z.string(), quantitySchema);
const stringMap = z.record(z.string(), z.string());
const named = z.looseObject({ name: z.string().min(1) });

const containerSchema = z.looseObject({
  name: z.string().min(1),
  image: z.string().min(1).optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(named).optional(),
  ports: z.array(z.looseObject({ containerPort: z.number().int().min(1).max(65535) })).optional(),
  volumeMounts: z.array(z.looseObject({ name: z.string().min(1), mountPath: z.string().min(1) })).optional(),
  resources: z.looseObject({ requests: quantities.optional(), limits: quantities.optional() }).optional(),
  restartPolicy: z.string().optional(),
});

const nodeSelectorTerm = z.looseObject({
  matchExpressions: z.array(z.looseObject({})).optional(),
  matchFields: z.array(z.looseObject({})).optional(),
});

export const podTemplateSchema = z.looseObject({
  metadata: z.looseObject({ labels: stringMap.optional(), annotations: stringMap.optional() }).optional(),
  spec: z.looseObject({
    containers: z.array(containerSchema).min(1),
    initContainers: z.array(containerSchema).optional(),
    volumes: z.array(named).optional(),
    affinity: z
      .looseObject({
        nodeAffinity: z
          .looseObject({
            requiredDuringSchedulingIgnoredDuringExecution: z
              .looseObject({ nodeSelectorTerms: z.array(nodeSelectorTerm) })
              .optional(),
          })
          .optional(),
      })
      .optional(),
    terminationGracePeriodSeconds: z.number().int().min(0).optional(),
    automountServiceAccountToken: z.boolean().optional(),
    overhead: quantities.optional(),
  }),
});

/** A template after validation; the client-node type, with every field the user wrote. */
export type PodTemplate = V1PodTemplateSpec & { spec: NonNullable<V1PodTemplateSpec['spec']> };

/**
 * Index of the training container: the one named by `optimus.dev/container`, else by kubectl's
 * `kubectl.kubernetes.io/default-container`, else the first with a Kubeflow training-container name
 * (`tensorflow`, `mxnet`, `pytorch`, …), else the first. -1 when an annotation names a missing one.
 */
export function trainingContainerIndex(
  containers: readonly Pick<V1Container, 'name'>[],
  annotations: Readonly<Record<string, string>> | undefined,
): number {
  const wanted = annotations?.[ANNOTATION_CONTAINER] ?? annotations?.[ANNOTATION_DEFAULT_CONTAINER];
  if (wanted !== undefined) return containers.findIndex((c) => c.name === wanted);
  const kubeflow = containers.findIndex((c) =>
    (KUBEFLOW_CONTAINER_NAMES as readonly string[]).includes(c.name),
  );
  return kubeflow >= 0 ? kubeflow : containers.length > 0 ? 0 : -1;
}

const requestsOf = (c: V1Container): Resources => parseResources(c.resources?.requests);
const maxOf = (a: Resources, b: Resources): Record<string, number> => {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
};

/**
 * What the kube-scheduler reserves for a pod of this spec: the sum of the containers, restartable
 * (native sidecar) init containers added, the largest one-shot init container (with the sidecars
 * started before it) as a floor, plus `overhead` — Kubernetes' `PodRequests` rule.
 */
export function podRequests(spec: PodTemplate['spec']): Record<string, number> {
  let sum: Record<string, number> = {};
  for (const c of spec.containers) sum = addResources(sum, requestsOf(c));
  let sidecars: Record<string, number> = {};
  let initPeak: Record<string, number> = {};
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      sum = addResources(sum, requestsOf(c));
      sidecars = addResources(sidecars, requestsOf(c));
      initPeak = maxOf(initPeak, sidecars);
    } else initPeak = maxOf(initPeak, addResources(requestsOf(c), sidecars));
  }
  return addResources(maxOf(sum, initPeak), parseResources(spec.overhead));
}

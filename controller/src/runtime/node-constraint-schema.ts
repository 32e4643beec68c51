/**
 * The wire form of a job's node constraints (`JobSpec.nodeConstraints`): what its pod templates
 * say about where a task may run, in Kubernetes terms (scheduling/types.ts `NodeConstraint`).
 * Bounded like every other input, so a job cannot make each round match megabytes of rules.
 */
import { z } from 'zod';

/** Kubernetes label keys are ≤ 253 + 1 + 63 characters, values ≤ 63. */
const key = z.string().min(1).max(317);
const value = z.string().max(63);

const requirement = z
  .object({
    key,
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
    values: z.array(value).max(256).optional(),
  })
  .strict();

const term = z
  .object({
    matchExpressions: z.array(requirement).max(32).optional(),
    matchFields: z.array(requirement).max(32).optional(),
  })
  .strict();

const toleration = z
  .object({
    // Empty with `Exists`: tolerates every taint.
    key: z.string().max(317).optional(),
    operator: z.enum(['Equal', 'Exists']).optional(),
    value: value.optional(),
    effect: z.enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();

export const nodeConstraintSchema = z
  .object({
    nodeSelector: z.record(key, value).optional(),
    /** Required node affinity terms (ORed). */
    terms: z.array(term).max(32).optional(),
    tolerations: z.array(toleration).max(64).optional(),
  })
  .strict();

/** Per role, constraints that must all hold (a PS also carries its job's scheduler pod's). */
export const roleConstraintsSchema = z
  .object({
    ps: z.array(nodeConstraintSchema).max(4).optional(),
    worker: z.array(nodeConstraintSchema).max(4).optional(),
  })
  .strict();

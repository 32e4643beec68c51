/**
 * Property-based fuzzing of the webhook's AdmissionReview decoder: any JSON, and any mutation of a
 * real review, gets an answer (or a clean "not an AdmissionReview" error), never an exception; every
 * answer carries the request's uid and allows the pod (the failure policy is Ignore), and a patch, if
 * any, is a JSON Patch that applies to the object it was computed for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { reviewAdmission } from '../../controller/src/k8s/webhook/admission';
import type { SidecarConfig } from '../../controller/src/k8s/webhook/sidecar-config';
import { RUNS } from './runs';

const fixtures = ['opt-in', 'opt-out', 'already-injected', 'not-a-pod'].map(
  (f) =>
    JSON.parse(
      readFileSync(
        join(import.meta.dirname, '../../controller/src/k8s/webhook/fixtures', `${f}.json`),
        'utf8',
      ),
    ) as Record<string, unknown>,
);
const configs: SidecarConfig[] = [
  { image: 's', resources: {}, brokerUrl: 'mqtt://b:1883', credentialsSecret: 'c', native: true },
  { image: 's', resources: {}, brokerUrl: 'mqtt://b:1883', perJobCredentials: true, native: false },
];

/** A path into a JSON value, and a wild value to put there. */
function mutate(v: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    copy[Number(head) % Math.max(1, copy.length)] = mutate(
      copy[Number(head) % Math.max(1, copy.length)],
      rest,
      value,
    );
    return copy;
  }
  if (typeof v === 'object' && v !== null)
    return { ...v, [String(head)]: mutate((v as Record<string, unknown>)[String(head)], rest, value) };
  return value;
}
const KEYS = [
  'request',
  'object',
  'spec',
  'containers',
  'volumes',
  'metadata',
  'labels',
  'annotations',
  'uid',
  'kind',
  'env',
  'initContainers',
  0,
  1,
];
const mutatedReview = fc
  .tuple(
    fc.constantFrom(...fixtures),
    fc.array(
      fc.tuple(
        fc.array(fc.constantFrom(...KEYS), { maxLength: 6 }),
        fc.oneof(fc.jsonValue(), fc.constant('oops'), fc.constant(null)),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([f, edits]) => edits.reduce<unknown>((acc, [p, v]) => mutate(acc, p, v), structuredClone(f)));

function check(body: unknown, cfg: SidecarConfig): void {
  const r = reviewAdmission(body, cfg);
  if (!r.ok) return;
  const req = (body as { request: { uid: string; object?: unknown } }).request;
  expect(r.review.response.uid).toBe(req.uid);
  expect(r.review.response.allowed).toBe(true);
  if (r.review.response.patch !== undefined) {
    const ops = JSON.parse(Buffer.from(r.review.response.patch, 'base64').toString('utf8')) as Operation[];
    expect(Array.isArray(ops)).toBe(true);
    expect(() => fastJsonPatch.applyPatch(structuredClone(req.object), ops, true)).not.toThrow();
  }
}

describe('AdmissionReview decoder (controller/src/k8s/webhook/admission.ts)', () => {
  it('answers or refuses any JSON, never throws', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom(...configs), (j, cfg) => check(j, cfg)),
      { numRuns: RUNS.admissionReviews },
    );
  });

  it('answers every mutation of a real review with its uid, allowed, and a patch that applies', () => {
    fc.assert(
      fc.property(mutatedReview, fc.constantFrom(...configs), (j, cfg) => check(j, cfg)),
      {
        numRuns: RUNS.admissionPodMutations,
      },
    );
  });
});

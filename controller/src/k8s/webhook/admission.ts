/**
 * AdmissionReview (admission.k8s.io/v1) in → AdmissionReview out. Every review is answered with
 * its request's uid; a mutation travels as a base64 JSONPatch computed by `fast-json-patch`.
 * Malformed input yields an error value, never an exception.
 */
import fastJsonPatch from 'fast-json-patch';
import type { MutateKind } from './mutate';
import { MUTATE_KINDS, mutate } from './mutate';
import type { SidecarConfig } from './sidecar-config';

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
  readonly warnings?: readonly string[];
  readonly status?: { readonly code: number; readonly message: string };
}

export interface AdmissionReviewOut {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

/** What the review did, for the webhook's counter: a mutate outcome, or not a pod at all. */
export type ReviewOutcome = MutateKind | 'not-a-pod';
export const REVIEW_OUTCOMES: readonly ReviewOutcome[] = [...MUTATE_KINDS, 'not-a-pod'];

export type ReviewResult =
  | { readonly ok: true; readonly review: AdmissionReviewOut; readonly outcome: ReviewOutcome }
  | { readonly ok: false; readonly error: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const answer = (response: AdmissionResponse, outcome: ReviewOutcome): ReviewResult => ({
  ok: true,
  outcome,
  review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response },
});

/**
 * Reviews one AdmissionReview body (already JSON-parsed). A body that is not an AdmissionReview
 * with a request uid is an error (HTTP 400); a review of something that is not a Pod is allowed
 * unchanged with a warning, so the webhook never blocks what it does not understand.
 */
export function reviewAdmission(body: unknown, cfg: SidecarConfig): ReviewResult {
  if (!isObject(body) || body['kind'] !== 'AdmissionReview')
    return { ok: false, error: 'expected an AdmissionReview object' };
  const request = body['request'];
  if (!isObject(request) || typeof request['uid'] !== 'string' || request['uid'] === '')
    return { ok: false, error: 'AdmissionReview.request.uid is missing' };
  const uid = request['uid'];
  const kind = request['kind'];
  const pod = request['object'];
  if (
    !isObject(kind) ||
    kind['kind'] !== 'Pod' ||
    !isObject(pod) ||
    !Array.isArray((pod['spec'] as Record<string, unknown> | undefined)?.['containers'])
  )
    return answer(
      {
        uid,
        allowed: true,
        warnings: ['optimus: the object is not a Pod with containers; nothing injected'],
      },
      'not-a-pod',
    );
  const namespace =
    typeof request['namespace'] === 'string'
      ? request['namespace']
      : ((pod['metadata'] as { namespace?: string } | undefined)?.namespace ?? '');
  let ops: readonly unknown[];
  let warnings: readonly string[];
  try {
    const outcome = mutate(pod, namespace, cfg);
    if (outcome.kind === 'not-requested' || outcome.kind === 'already-injected')
      return answer({ uid, allowed: true }, outcome.kind);
    if (outcome.kind !== 'injected')
      return answer({ uid, allowed: true, warnings: [outcome.warning] }, outcome.kind);
    ops = fastJsonPatch.compare(pod, outcome.pod as Record<string, unknown>);
    warnings = outcome.warnings;
  } catch (err) {
    // mutate checks the shapes it merges into; this is the last line: still answer this uid,
    // and let the pod through unchanged as failurePolicy Ignore would.
    const why = err instanceof Error ? err.message : String(err);
    return answer(
      { uid, allowed: true, warnings: [`optimus: malformed Pod, nothing injected (${why})`] },
      'malformed',
    );
  }
  return answer(
    {
      uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(ops)).toString('base64'),
      ...(warnings.length ? { warnings } : {}),
    },
    'injected',
  );
}

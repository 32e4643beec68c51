/**
 * A stable task index from a pod's name, for pods whose owner gives none (ADR 0038): a trailing
 * `-<digits>` is the ordinal (StatefulSet `web-3`, hand-made `w-1`); any other name (a Deployment's
 * `train-7d9f8c6b5-x2k4q`) hashes into the index range. Stable for the pod's life, distinct per
 * pod with high probability (k pods collide with probability ≈ k²/2 000 000), but not dense: the
 * index of a Deployment replica says nothing about how many replicas there are.
 *
 * The webhook uses it when it knows the name; a pod created from `generateName` has no name yet at
 * admission, so its sidecar applies the same function to its own name (`OPTIMUS_POD_NAME`).
 */
export const MAX_TASK_INDEX = 1_000_000;

/** FNV-1a, 32 bits: small, dependency-free and the same in every process. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function podOrdinal(name: string): number {
  const m = /-(\d{1,7})$/.exec(name);
  if (m && Number(m[1]) <= MAX_TASK_INDEX) return Number(m[1]);
  return fnv1a(name) % MAX_TASK_INDEX;
}

/**
 * Update rules of the API server that a controller meets when it tries to change an object in
 * place (422 Invalid): a Pod's spec is immutable except container images, `activeDeadlineSeconds`,
 * additions to `tolerations` and the scheduling gates; a Service's `clusterIP` cannot change; a
 * Secret's `type` cannot change; a Secret or ConfigMap marked `immutable: true` keeps its data and
 * the mark (Kubernetes docs, "Immutable Secrets"; `ValidateSecretUpdate`, `ValidateConfigMapUpdate`).
 */
type Obj = Record<string, unknown>;

const POD_MUTABLE_MESSAGE =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`, ' +
  '`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions ' +
  'to existing tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was ' +
  'previously negative)';

const json = (v: unknown) => JSON.stringify(v ?? null);

/** The pod spec with what an update may change blanked out, so the rest can be compared. */
function frozenPart(spec: Obj | undefined): Obj {
  if (!spec) return {};
  const blank = (cs: unknown) =>
    Array.isArray(cs) ? cs.map((c) => ({ ...(c as Obj), image: undefined })) : cs;
  const { activeDeadlineSeconds: _a, tolerations: _t, schedulingGates: _g, ...rest } = spec;
  return { ...rest, containers: blank(rest['containers']), initContainers: blank(rest['initContainers']) };
}

function podUpdateErrors(old: Obj, next: Obj): string[] {
  const errors: string[] = [];
  const o = old['spec'] as Obj | undefined;
  const n = next['spec'] as Obj | undefined;
  if (json(frozenPart(o)) !== json(frozenPart(n))) errors.push(POD_MUTABLE_MESSAGE);
  const before = (o?.['tolerations'] as unknown[] | undefined) ?? [];
  const after = new Set(((n?.['tolerations'] as unknown[] | undefined) ?? []).map(json));
  if (!before.every((t) => after.has(json(t))))
    errors.push(
      'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
    );
  return errors;
}

function serviceUpdateErrors(old: Obj, next: Obj): string[] {
  const o = (old['spec'] as Obj | undefined)?.['clusterIP'];
  const n = (next['spec'] as Obj | undefined)?.['clusterIP'];
  return o !== undefined && o !== '' && n !== o
    ? [`spec.clusterIP: Invalid value: ${json(n)}: field is immutable`]
    : [];
}

/** `immutable: true` freezes the data and the mark itself. */
function immutableDataErrors(old: Obj, next: Obj): string[] {
  if (old['immutable'] !== true) return [];
  const errors: string[] = [];
  if (next['immutable'] !== true)
    errors.push('immutable: Forbidden: field is immutable when `immutable` is set');
  for (const field of ['data', 'stringData', 'binaryData'])
    if (next[field] !== undefined && json(next[field]) !== json(old[field]))
      errors.push(`${field}: Forbidden: field is immutable when \`immutable\` is set`);
  return errors;
}

function secretUpdateErrors(old: Obj, next: Obj): string[] {
  // Both sides defaulted as the server defaults them (an omitted type is Opaque).
  const before = (old['type'] as string | undefined) ?? 'Opaque';
  const after = (next['type'] as string | undefined) ?? 'Opaque';
  const type = before === after ? [] : [`type: Invalid value: ${json(after)}: field is immutable`];
  return [...type, ...immutableDataErrors(old, next)];
}

/** Violations of the update rules of kind `key` (apiVersion/kind); empty when the update may go ahead. */
export function updateErrors(key: string, old: Obj, next: Obj): string[] {
  if (key === 'v1/Pod') return podUpdateErrors(old, next);
  if (key === 'v1/Service') return serviceUpdateErrors(old, next);
  if (key === 'v1/Secret') return secretUpdateErrors(old, next);
  if (key === 'v1/ConfigMap') return immutableDataErrors(old, next);
  return [];
}

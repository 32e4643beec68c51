/**
 * The API server's write semantics on top of the store: defaulting of metadata, the status
 * subresource split, generation bumps, schema validation (422), graceful pod deletion and
 * owner-reference garbage collection.
 */
import { randomBytes } from 'node:crypto';
import { validateBuiltin } from './builtin-schema';
import { validateCustomResource } from './crd-schema';
import type { ResourceType } from './resources';
import { BUILTIN_TYPES, typesFromCrd } from './resources';
import type { K8sObject } from './store';
import { ObjectStore, StoreError, typeKeyOf } from './store';

const withoutStatus = (o: K8sObject): Record<string, unknown> => {
  const { status: _s, metadata: _m, ...rest } = o;
  return rest;
};

export class ApiOperations {
  readonly store: ObjectStore;
  private readonly types = new Map<string, ResourceType>();

  constructor(store = new ObjectStore()) {
    this.store = store;
    for (const t of BUILTIN_TYPES) this.register(t);
  }

  resolve(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${version}/${plural}`);
  }

  create(t: ResourceType, ns: string | undefined, body: unknown): K8sObject {
    const obj = this.asObject(body, t);
    if (!obj.metadata.name && typeof obj.metadata['generateName'] === 'string')
      obj.metadata.name = `${obj.metadata['generateName']}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (!obj.metadata.name)
      throw new StoreError(422, 'Invalid', 'metadata.name: Required value: name or generateName is required');
    this.placeInNamespace(t, ns, obj);
    delete obj.metadata.resourceVersion;
    this.validate(t, obj);
    const created = this.store.create(t, obj);
    if (t.kind === 'CustomResourceDefinition') for (const ct of typesFromCrd(created)) this.register(ct);
    return created;
  }

  /** PUT on the object (`subresource` undefined) or on its `status`. */
  replace(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    body: unknown,
    subresource?: string,
  ): K8sObject {
    this.checkSubresource(t, subresource);
    const incoming = this.asObject(body, t);
    if (incoming.metadata.name !== name)
      throw new StoreError(
        400,
        'BadRequest',
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    this.placeInNamespace(t, ns, incoming);
    const current = this.mustGet(t, ns, name);
    let next: K8sObject;
    if (subresource === 'status') {
      // The status endpoint changes status only; everything else stays as stored.
      next = { ...current, status: incoming['status'] };
      next.metadata = { ...current.metadata };
      if (incoming.metadata.resourceVersion !== undefined)
        next.metadata.resourceVersion = incoming.metadata.resourceVersion;
      else delete next.metadata.resourceVersion;
    } else {
      next = incoming;
      // The main endpoint of a type with a status subresource ignores status changes.
      if (t.status) next['status'] = current['status'];
      if (next['status'] === undefined) delete next['status'];
    }
    this.validate(t, next);
    const specChanged = JSON.stringify(withoutStatus(current)) !== JSON.stringify(withoutStatus(next));
    return this.store.update(t, next, { bumpGeneration: subresource !== 'status' && specChanged });
  }

  delete(t: ResourceType, ns: string | undefined, name: string, gracePeriodSeconds?: number): K8sObject {
    const current = this.mustGet(t, ns, name);
    const spec = current['spec'] as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
    const grace = gracePeriodSeconds ?? spec?.terminationGracePeriodSeconds ?? 30;
    // A bound pod terminates gracefully: the kubelet (double) sends SIGTERM, waits, then removes it.
    if (t.kind === 'Pod' && spec?.nodeName && grace > 0) return this.store.markDeleting(t, ns, name, grace);
    const gone = this.store.remove(t, ns, name);
    this.collectGarbage(gone.metadata.uid ?? '');
    return gone;
  }

  private collectGarbage(uid: string): void {
    for (const dep of this.store.dependentsOf(uid)) {
      const t = [...this.types.values()].find((x) => typeKeyOf(x) === dep.typeKey);
      if (!t) continue;
      try {
        this.delete(t, dep.object.metadata.namespace, dep.object.metadata.name);
      } catch (err) {
        if (!(err instanceof StoreError && err.code === 404)) throw err;
      }
    }
  }

  mustGet(t: ResourceType, ns: string | undefined, name: string): K8sObject {
    const o = this.store.get(t, t.namespaced ? ns : undefined, name);
    if (!o)
      throw new StoreError(404, 'NotFound', `${t.plural}${t.group ? `.${t.group}` : ''} "${name}" not found`);
    return o;
  }

  checkSubresource(t: ResourceType, subresource: string | undefined): void {
    if (subresource === undefined) return;
    if (subresource !== 'status' || !t.status)
      throw new StoreError(
        404,
        'NotFound',
        `the server could not find the requested resource (${t.plural}/${subresource})`,
      );
  }

  private register(t: ResourceType): void {
    this.types.set(`${t.group}/${t.version}/${t.plural}`, t);
  }

  private asObject(body: unknown, t: ResourceType): K8sObject {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new StoreError(400, 'BadRequest', `the body must be a ${t.kind} object`);
    const obj = structuredClone(body) as K8sObject;
    if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = { name: '' };
    if (obj.kind !== undefined && obj.kind !== t.kind)
      throw new StoreError(
        400,
        'BadRequest',
        `the kind of the object (${obj.kind}) does not match ${t.kind}`,
      );
    return obj;
  }

  private placeInNamespace(t: ResourceType, ns: string | undefined, obj: K8sObject): void {
    if (!t.namespaced) return;
    if (ns === undefined) throw new StoreError(404, 'NotFound', `the namespace is required for ${t.plural}`);
    if (obj.metadata.namespace !== undefined && obj.metadata.namespace !== ns)
      throw new StoreError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    obj.metadata.namespace = ns;
  }

  private validate(t: ResourceType, obj: K8sObject): void {
    const errors =
      t.crdSchema !== undefined ? validateCustomResource(t.crdSchema, obj) : validateBuiltin(t, obj);
    if (errors.length > 0)
      throw new StoreError(
        422,
        'Invalid',
        `${t.kind} "${obj.metadata.name}" is invalid: ${errors.join(', ')}`,
      );
  }
}

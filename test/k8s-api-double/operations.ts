/**
 * The API server's write semantics on top of the store: the JSON decoder's refusals (400, e.g.
 * MicroTime), pruning of unknown fields (a `Warning`, or 400 with `fieldValidation=Strict`),
 * schema validation (422), update rules of immutable fields (422), the namespace lifecycle (404
 * in a namespace that does not exist), defaulting of metadata, the status subresource split,
 * generation bumps, graceful pod deletion and owner-reference garbage collection.
 */
import { randomBytes } from 'node:crypto';
import { pruneBuiltin } from './builtin-fields';
import { validateBuiltin } from './builtin-schema';
import { admitCustomResource } from './crd-schema';
import { decodeError } from './decode';
import { updateErrors } from './immutable';
import type { ResourceType } from './resources';
import { apiVersionOf, BUILTIN_TYPES, typesFromCrd } from './resources';
import type { K8sObject } from './store';
import { ObjectStore, StoreError, typeKeyOf } from './store';

/** How one write treats unknown fields (the `fieldValidation` query parameter) and where warnings go. */
export interface WriteContext {
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  readonly warnings?: string[];
}

/** A Secret's write-only `stringData` is merged into `data` (base64), as the API server does. */
function secretDefaults(t: ResourceType, obj: K8sObject): K8sObject {
  if (t.kind !== 'Secret' || t.group !== '') return obj;
  const { stringData, ...rest } = obj as K8sObject & {
    stringData?: Record<string, string>;
    data?: Record<string, string>;
  };
  if (!stringData) return { ...obj, type: obj['type'] ?? 'Opaque' };
  const data = { ...(rest.data ?? {}) };
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  return { ...rest, data, type: rest['type'] ?? 'Opaque' };
}

/** Namespaces every cluster starts with. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

const withoutStatus = (o: K8sObject): Record<string, unknown> => {
  const { status: _s, metadata: _m, ...rest } = o;
  return rest;
};

export class ApiOperations {
  readonly store: ObjectStore;
  private readonly types = new Map<string, ResourceType>();

  constructor(
    store = new ObjectStore(),
    /** Namespaces that exist from the start besides the system ones; `null`: any namespace exists. */
    namespaces: readonly string[] | null = [],
  ) {
    this.store = store;
    for (const t of BUILTIN_TYPES) this.register(t);
    this.lifecycle = namespaces !== null;
    if (namespaces !== null)
      for (const name of new Set([...SYSTEM_NAMESPACES, ...namespaces]))
        this.store.create(this.namespaceType, {
          metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
        });
  }

  private readonly lifecycle: boolean;

  private get namespaceType(): ResourceType {
    return BUILTIN_TYPES.find((t) => t.kind === 'Namespace')!;
  }

  resolve(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${version}/${plural}`);
  }

  /** The served type of `apiVersion` + `kind` (what kubectl's discovery finds). */
  resolveKind(apiVersion: string, kind: string): ResourceType | undefined {
    return [...this.types.values()].find((t) => apiVersionOf(t) === apiVersion && t.kind === kind);
  }

  create(t: ResourceType, ns: string | undefined, body: unknown, ctx: WriteContext = {}): K8sObject {
    let obj = this.asObject(body, t);
    if (!obj.metadata.name && typeof obj.metadata['generateName'] === 'string')
      obj.metadata.name = `${obj.metadata['generateName']}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (!obj.metadata.name)
      throw new StoreError(422, 'Invalid', 'metadata.name: Required value: name or generateName is required');
    this.placeInNamespace(t, ns, obj);
    this.checkNamespaceExists(t, obj.metadata.namespace);
    delete obj.metadata.resourceVersion;
    obj = this.admit(t, obj, ctx);
    if (t.kind === 'Namespace')
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name };
    const created = this.store.create(t, obj);
    if (t.kind === 'CustomResourceDefinition') for (const ct of typesFromCrd(created)) this.register(ct);
    this.collectOrphan(t, created);
    return created;
  }

  /** PUT on the object (`subresource` undefined) or on its `status`. */
  replace(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    body: unknown,
    subresource?: string,
    ctx: WriteContext = {},
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
    next = this.admit(t, next, ctx);
    if (subresource !== 'status') {
      const errors = updateErrors(`${apiVersionOf(t)}/${t.kind}`, current, next);
      if (errors.length > 0)
        throw new StoreError(422, 'Invalid', `${t.kind} "${name}" is invalid: ${errors.join(', ')}`);
    }
    const specChanged = JSON.stringify(withoutStatus(current)) !== JSON.stringify(withoutStatus(next));
    return this.store.update(t, next, { bumpGeneration: subresource !== 'status' && specChanged });
  }

  delete(t: ResourceType, ns: string | undefined, name: string, gracePeriodSeconds?: number): K8sObject {
    const current = this.mustGet(t, ns, name);
    if (t.kind === 'Namespace') this.emptyNamespace(name);
    const spec = current['spec'] as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
    const grace = gracePeriodSeconds ?? spec?.terminationGracePeriodSeconds ?? 30;
    // A bound pod terminates gracefully: the kubelet (double) sends SIGTERM, waits, then removes it.
    if (t.kind === 'Pod' && spec?.nodeName && grace > 0) return this.store.markDeleting(t, ns, name, grace);
    const gone = this.store.remove(t, ns, name);
    this.collectGarbage(gone.metadata.uid ?? '');
    return gone;
  }

  /** Deleting a Namespace deletes everything in it (at once: the double has no finalizers). */
  private emptyNamespace(ns: string): void {
    for (const t of new Set(this.types.values())) {
      if (!t.namespaced) continue;
      for (const o of this.store.list(t, ns)) {
        try {
          this.store.remove(t, ns, o.metadata.name);
        } catch (err) {
          if (!(err instanceof StoreError && err.code === 404)) throw err;
        }
      }
    }
  }

  /**
   * The garbage collector deletes a dependent whose owners are all gone, also one created after
   * its owner was deleted (an ownerReference to a uid that does not exist).
   */
  private collectOrphan(t: ResourceType, obj: K8sObject): void {
    const owners = obj.metadata.ownerReferences ?? [];
    if (owners.length === 0 || owners.some((r) => this.store.hasUid(r.uid))) return;
    setImmediate(() => {
      try {
        this.delete(t, obj.metadata.namespace, obj.metadata.name, 0);
      } catch (err) {
        if (!(err instanceof StoreError && err.code === 404)) throw err;
      }
    });
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

  private checkNamespaceExists(t: ResourceType, ns: string | undefined): void {
    if (!this.lifecycle || !t.namespaced || ns === undefined) return;
    const namespace = this.store.get(this.namespaceType, undefined, ns);
    if (!namespace) throw new StoreError(404, 'NotFound', `namespaces "${ns}" not found`);
    if (namespace.metadata.deletionTimestamp !== undefined)
      throw new StoreError(
        403,
        'Forbidden',
        `unable to create new content in namespace ${ns} because it is being terminated`,
      );
  }

  /** Decode (400), prune unknown fields (warning, or 400 when Strict), validate (422), default. */
  private admit(t: ResourceType, obj: K8sObject, ctx: WriteContext): K8sObject {
    return secretDefaults(t, this.validated(t, obj, ctx));
  }

  private validated(t: ResourceType, obj: K8sObject, ctx: WriteContext): K8sObject {
    const key = `${apiVersionOf(t)}/${t.kind}`;
    const decode = decodeError(key, obj);
    if (decode)
      throw new StoreError(
        400,
        'BadRequest',
        `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}: ${decode}`,
      );
    let out = obj;
    let dropped: string[];
    let errors: string[];
    if (t.crdSchema !== undefined) {
      const r = admitCustomResource(t.crdSchema, obj);
      out = r.object as K8sObject;
      dropped = r.dropped;
      errors = r.errors;
    } else {
      out = structuredClone(obj);
      dropped = pruneBuiltin(key, out);
      errors = validateBuiltin(t, out);
    }
    if (dropped.length > 0 && ctx.fieldValidation === 'Strict')
      throw new StoreError(
        400,
        'BadRequest',
        `strict decoding error: ${dropped.map((d) => `unknown field "${d}"`).join(', ')}`,
      );
    if (ctx.fieldValidation !== 'Ignore') for (const d of dropped) ctx.warnings?.push(`unknown field "${d}"`);
    if (errors.length > 0)
      throw new StoreError(
        422,
        'Invalid',
        `${t.kind} "${obj.metadata.name}" is invalid: ${errors.join(', ')}`,
      );
    return out;
  }
}

/**
 * The double's object store: one global resourceVersion counter (like etcd's revision), a bounded
 * event history for watches (older resourceVersions get 410 Gone), and watch subscribers.
 */
import { randomUUID } from 'node:crypto';
import type { ResourceType } from './resources';
import { apiVersionOf } from './resources';

export type K8sObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown> & {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    uid?: string;
    generation?: number;
    ownerReferences?: { uid: string }[];
    deletionTimestamp?: string;
  };
};

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoredEvent {
  readonly rv: number;
  readonly type: WatchEventType;
  readonly typeKey: string;
  readonly object: K8sObject;
}

export const typeKeyOf = (t: Pick<ResourceType, 'group' | 'plural'>): string => `${t.group}/${t.plural}`;
const objectKey = (typeKey: string, ns: string | undefined, name: string) => `${typeKey}|${ns ?? ''}|${name}`;

export class StoreError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const clone = <T>(v: T): T => structuredClone(v);

export class ObjectStore {
  private rv = 1;
  private readonly objects = new Map<string, { readonly typeKey: string; readonly obj: K8sObject }>();
  private readonly history: StoredEvent[] = [];
  private readonly subscribers = new Set<(e: StoredEvent) => void>();

  /** `historyLimit` bounds the watch window: asking for an older resourceVersion gets 410 Gone. */
  constructor(private readonly historyLimit = 1000) {}

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The oldest resourceVersion a watch may resume from. */
  get oldestWatchable(): number {
    return this.history[0] ? this.history[0].rv - 1 : this.rv;
  }

  get(t: ResourceType, ns: string | undefined, name: string): K8sObject | undefined {
    const o = this.objects.get(objectKey(typeKeyOf(t), ns, name));
    return o ? clone(o.obj) : undefined;
  }

  list(t: ResourceType, ns?: string): K8sObject[] {
    const key = typeKeyOf(t);
    return [...this.objects.values()]
      .filter((o) => o.typeKey === key && (ns === undefined || o.obj.metadata.namespace === ns))
      .map((o) => clone(o.obj));
  }

  create(t: ResourceType, obj: K8sObject): K8sObject {
    const key = objectKey(typeKeyOf(t), obj.metadata.namespace, obj.metadata.name);
    if (this.objects.has(key))
      throw new StoreError(409, 'AlreadyExists', `${t.plural} "${obj.metadata.name}" already exists`);
    const stored = clone(obj);
    stored.apiVersion = apiVersionOf(t);
    stored.kind = t.kind;
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    stored.metadata.generation = 1;
    return this.commit(typeKeyOf(t), key, stored, 'ADDED');
  }

  /** Replaces an object. A stale `metadata.resourceVersion` gets 409 Conflict (optimistic concurrency). */
  update(t: ResourceType, obj: K8sObject, opts: { bumpGeneration: boolean }): K8sObject {
    const key = objectKey(typeKeyOf(t), obj.metadata.namespace, obj.metadata.name);
    const current = this.objects.get(key)?.obj;
    if (!current) throw new StoreError(404, 'NotFound', `${t.plural} "${obj.metadata.name}" not found`);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
      throw new StoreError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${t.plural} "${obj.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const stored = clone(obj);
    stored.apiVersion = apiVersionOf(t);
    stored.kind = t.kind;
    for (const f of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
    ] as const) {
      if (current.metadata[f] !== undefined)
        (stored.metadata as Record<string, unknown>)[f] = current.metadata[f];
    }
    const gen = current.metadata.generation ?? 1;
    stored.metadata.generation = opts.bumpGeneration ? gen + 1 : gen;
    return this.commit(typeKeyOf(t), key, stored, 'MODIFIED');
  }

  /** Marks an object as terminating (graceful deletion); the kubelet double finishes it. */
  markDeleting(t: ResourceType, ns: string | undefined, name: string, graceSeconds: number): K8sObject {
    const key = objectKey(typeKeyOf(t), ns, name);
    const current = this.objects.get(key)?.obj;
    if (!current) throw new StoreError(404, 'NotFound', `${t.plural} "${name}" not found`);
    if (current.metadata.deletionTimestamp !== undefined) return clone(current);
    const stored = clone(current);
    stored.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    stored.metadata.deletionGracePeriodSeconds = graceSeconds;
    return this.commit(typeKeyOf(t), key, stored, 'MODIFIED');
  }

  remove(t: ResourceType, ns: string | undefined, name: string): K8sObject {
    const tk = typeKeyOf(t);
    const key = objectKey(tk, ns, name);
    const current = this.objects.get(key)?.obj;
    if (!current) throw new StoreError(404, 'NotFound', `${t.plural} "${name}" not found`);
    this.objects.delete(key);
    const gone = clone(current);
    gone.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, type: 'DELETED', typeKey: tk, object: gone });
    return clone(gone);
  }

  /** True when some stored object has this uid. */
  hasUid(uid: string): boolean {
    for (const o of this.objects.values()) if (o.obj.metadata.uid === uid) return true;
    return false;
  }

  /** Objects (any type) whose ownerReferences name `uid`: garbage-collection candidates. */
  dependentsOf(uid: string): { typeKey: string; object: K8sObject }[] {
    return [...this.objects.values()]
      .filter((o) => o.obj.metadata.ownerReferences?.some((r) => r.uid === uid))
      .map((o) => ({ typeKey: o.typeKey, object: clone(o.obj) }));
  }

  /** Events after `sinceRv` (exclusive), or null when that version is older than the history (410). */
  eventsSince(sinceRv: number): StoredEvent[] | null {
    if (sinceRv < this.oldestWatchable) return null;
    return this.history.filter((e) => e.rv > sinceRv);
  }

  subscribe(fn: (e: StoredEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** Drops the whole watch history: every resume afterwards gets 410 Gone (tests the re-list path). */
  compact(): void {
    this.history.length = 0;
  }

  private commit(typeKey: string, key: string, obj: K8sObject, type: WatchEventType): K8sObject {
    obj.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, { typeKey, obj });
    this.record({ rv: this.rv, type, typeKey, object: clone(obj) });
    return clone(obj);
  }

  private record(e: StoredEvent): void {
    this.history.push(e);
    if (this.history.length > this.historyLimit) this.history.shift();
    for (const s of this.subscribers) s(e);
  }
}

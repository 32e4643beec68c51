/**
 * Sidecar credentials in every namespace where training runs, without anyone copying Secrets by
 * hand: the injected sidecar mounts its broker credentials Secret from its own namespace, so the
 * leader keeps a copy of the source Secret (in the controller's namespace) in each namespace that
 * has an OptimusJob or an opted-in pod. Copies carry a label so they can be found and cleaned up.
 *
 * Deliberately a small separate piece: a per-job broker identity (instead of one shared sidecar
 * credential) replaces this module, not the rest of the controller.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';

/** Set on every copy: `kubectl get secrets -A -l optimus.dev/copied-from` lists them. */
export const LABEL_COPIED_FROM = 'optimus.dev/copied-from' as const;

export interface CredentialsDistributorOptions {
  readonly clients: KubeClients;
  /** Where the source Secret lives (the controller's namespace). */
  readonly sourceNamespace: string;
  readonly sourceName: string;
  /** The name the webhook mounts (`OPTIMUS_SIDECAR_CREDENTIALS_SECRET`). */
  readonly targetName: string;
}

const sameData = (a: V1Secret['data'], b: V1Secret['data']) =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

export class CredentialsDistributor {
  constructor(private readonly o: CredentialsDistributorOptions) {}

  /** The Secret copied everywhere (read once per pass of the sync, not once per namespace). */
  readSource(): Promise<V1Secret> {
    return this.o.clients.core.readNamespacedSecret({
      namespace: this.o.sourceNamespace,
      name: this.o.sourceName,
    });
  }

  /**
   * Makes the copy in `namespace` equal to the source (creates, or updates a changed one).
   * Returns what it did. Never touches a Secret of that name it did not create.
   */
  async ensure(
    namespace: string,
    known?: V1Secret,
  ): Promise<'created' | 'updated' | 'unchanged' | 'skipped'> {
    const { core } = this.o.clients;
    if (namespace === this.o.sourceNamespace && this.o.sourceName === this.o.targetName) return 'skipped';
    const source = known ?? (await this.readSource());
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.o.targetName,
        namespace,
        labels: { [LABEL_COPIED_FROM]: this.o.sourceNamespace },
      },
      type: source.type ?? 'Opaque',
      data: source.data ?? {},
    };
    let current: V1Secret;
    try {
      current = await core.readNamespacedSecret({ namespace, name: this.o.targetName });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      try {
        await core.createNamespacedSecret({ namespace, body });
        return 'created';
      } catch (e) {
        if (statusCodeOf(e) === 409) return 'unchanged'; // created meanwhile (the other replica)
        throw e;
      }
    }
    if (current.metadata?.labels?.[LABEL_COPIED_FROM] === undefined)
      throw new Error(
        `Secret ${namespace}/${this.o.targetName} exists and was not created by Optimus; leaving it alone ` +
          '(delete it, or label it optimus.dev/copied-from, to let the controller keep it in sync)',
      );
    if (sameData(current.data, body.data) && current.type === body.type) return 'unchanged';
    // The API server refuses to change a Secret's type, or anything of an immutable one: re-create.
    if (current.type !== body.type || current.immutable === true) {
      await core.deleteNamespacedSecret({ namespace, name: this.o.targetName });
      await core.createNamespacedSecret({ namespace, body });
      return 'updated';
    }
    await core.replaceNamespacedSecret({
      namespace,
      name: this.o.targetName,
      body: {
        ...body,
        metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion ?? '' },
      },
    });
    return 'updated';
  }
}

export interface CredentialsSyncOptions {
  readonly distributor: CredentialsDistributor;
  /** The namespaces that need the Secret now (jobs and opted-in pods). */
  readonly namespaces: () => readonly string[];
  readonly isLeader: () => boolean;
  /** How often new namespaces are looked for (opted-in pods appear without an OptimusJob). */
  readonly intervalMs?: number;
  /** Every this many intervals, namespaces already in sync are checked again (a rotated source). */
  readonly recheckEvery?: number;
  readonly onError?: (err: unknown, namespace: string) => void;
}

/**
 * Keeps the copies in sync: `sync()` on demand (before jobs are handed to the runtime), new
 * namespaces every `intervalMs` (10 s), and all of them every `recheckEvery` intervals (6).
 */
export function startCredentialsSync(o: CredentialsSyncOptions): { sync(): Promise<void>; stop(): void } {
  const done = new Set<string>();
  let running: Promise<void> = Promise.resolve();
  const pass = async (all: boolean) => {
    if (!o.isLeader()) return;
    const todo = [...new Set(o.namespaces())].filter((ns) => all || !done.has(ns));
    if (todo.length === 0) return;
    let source: V1Secret;
    try {
      source = await o.distributor.readSource();
    } catch (err) {
      for (const ns of todo) {
        done.delete(ns);
        o.onError?.(err, ns);
      }
      return;
    }
    for (const ns of todo) {
      try {
        await o.distributor.ensure(ns, source);
        done.add(ns);
      } catch (err) {
        done.delete(ns);
        o.onError?.(err, ns);
      }
    }
  };
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const all = ticks % (o.recheckEvery ?? 6) === 0;
    running = running.then(() => pass(all));
  }, o.intervalMs ?? 10_000);
  timer.unref();
  return {
    sync: () => (running = running.then(() => pass(false))),
    stop: () => clearInterval(timer),
  };
}

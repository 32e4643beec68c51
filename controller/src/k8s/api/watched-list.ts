/**
 * A list + watch cache of one resource path (client-node's informer) that restarts itself
 * after errors with a delay, and tells listeners about changes.
 */
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { makeInformer } from '@kubernetes/client-node';

export interface WatchedListOptions<T extends KubernetesObject> {
  readonly config: KubeConfig;
  /** API path of the collection, e.g. `/api/v1/pods`. */
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<T>>;
  /** Only objects with these labels (`k=v,…`); `list` must ask for the same. */
  readonly labelSelector?: string;
  readonly restartDelayMs?: number;
  readonly onError?: (err: unknown) => void;
}

export class WatchedList<T extends KubernetesObject> {
  private readonly informer;
  private readonly listeners = new Set<(obj: T) => void>();
  private stopped = false;
  private synced = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Set by the error callback: client-node reports a failed list there, and start() still resolves. */
  private failedSinceStart = false;
  private markSynced: () => void = () => {};
  private readonly firstSync = new Promise<void>((resolve) => (this.markSynced = resolve));

  constructor(private readonly o: WatchedListOptions<T>) {
    this.informer = makeInformer<T>(o.config, o.path, o.list, o.labelSelector);
    const changed = (obj: T) => {
      for (const l of this.listeners) {
        try {
          l(obj);
        } catch (err) {
          o.onError?.(err);
        }
      }
    };
    this.informer.on('add', changed);
    this.informer.on('update', changed);
    this.informer.on('delete', changed);
    this.informer.on('error', (err: unknown) => {
      this.failedSinceStart = true;
      o.onError?.(err);
      if (this.stopped) return;
      // client-node's informer stops after a non-410 error; start it again after a pause.
      this.restartTimer = setTimeout(() => void this.startInformer(), o.restartDelayMs ?? 2000);
    });
  }

  /**
   * Lists once and starts watching; resolves when a first list is in the cache (retrying a failed
   * one): a controller that began with an empty cache would take every job for new.
   */
  async start(): Promise<void> {
    this.stopped = false;
    await this.startInformer();
    await this.firstSync;
  }

  private async startInformer(): Promise<void> {
    if (this.stopped) return;
    try {
      this.failedSinceStart = false;
      await this.informer.start();
      if (this.failedSinceStart) return; // the error callback has scheduled the retry
      this.synced = true;
      this.markSynced();
    } catch (err) {
      this.o.onError?.(err);
      this.restartTimer = setTimeout(() => void this.startInformer(), this.o.restartDelayMs ?? 2000);
    }
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Every object, or those of one namespace (the informer's cache is keyed by namespace). */
  items(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  /** Calls `fn` with the object after every add/update/delete; returns the unsubscribe function. */
  onChange(fn: (obj: T) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.markSynced(); // a start() still waiting gives up
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }
}

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
  readonly restartDelayMs?: number;
  readonly onError?: (err: unknown) => void;
}

export class WatchedList<T extends KubernetesObject> {
  private readonly informer;
  private readonly listeners = new Set<() => void>();
  private stopped = false;
  private synced = false;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: WatchedListOptions<T>) {
    this.informer = makeInformer<T>(o.config, o.path, o.list);
    const changed = () => this.listeners.forEach((l) => l());
    this.informer.on('add', changed);
    this.informer.on('update', changed);
    this.informer.on('delete', changed);
    this.informer.on('error', (err: unknown) => {
      o.onError?.(err);
      if (this.stopped) return;
      // client-node's informer stops after a non-410 error; start it again after a pause.
      this.restartTimer = setTimeout(() => void this.startInformer(), o.restartDelayMs ?? 2000);
    });
  }

  /** Lists once and starts watching; resolves when the first list is in the cache. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.startInformer();
  }

  private async startInformer(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.informer.start();
      this.synced = true;
    } catch (err) {
      this.o.onError?.(err);
      this.restartTimer = setTimeout(() => void this.startInformer(), this.o.restartDelayMs ?? 2000);
    }
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  items(): readonly T[] {
    return this.informer.list();
  }

  /** Calls `fn` after every add/update/delete; returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }
}

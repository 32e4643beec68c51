/** A tiny in-process event hub: decisions and job changes, for the SSE endpoint and the live view. */

export type RuntimeEvent =
  | {
      readonly type: 'decision';
      readonly round: number;
      readonly actions: readonly unknown[];
      readonly ts: number;
    }
  | { readonly type: 'job'; readonly id: string; readonly phase: string; readonly ts: number }
  /** Progress or predictions of these jobs changed (the dashboard's sampler emits it between rounds). */
  | { readonly type: 'progress'; readonly jobs: readonly string[]; readonly ts: number };

export class EventHub {
  private readonly listeners = new Set<(e: RuntimeEvent) => void>();

  /** Subscribes; returns the unsubscribe function. */
  subscribe(fn: (e: RuntimeEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit(e: RuntimeEvent): void {
    for (const fn of this.listeners) {
      try {
        fn(e);
      } catch {
        // A failing listener (a closed SSE stream) must not stop the others.
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}

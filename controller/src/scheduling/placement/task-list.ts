/** Helpers shared by placers: turning per-server counts into `TaskPlacement` lists. */
import type { TaskPlacement } from '../types';

/** Collects tasks per role and numbers them 0.. in the order they were added. */
export class TaskListBuilder {
  private readonly ps: string[] = [];
  private readonly workers: string[] = [];

  add(role: 'ps' | 'worker', server: string, count = 1): void {
    const list = role === 'ps' ? this.ps : this.workers;
    for (let i = 0; i < count; i++) list.push(server);
  }

  build(): TaskPlacement[] {
    return [
      ...this.ps.map((server, index) => ({ role: 'ps' as const, index, server })),
      ...this.workers.map((server, index) => ({ role: 'worker' as const, index, server })),
    ];
  }
}

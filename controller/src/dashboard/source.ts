/**
 * What the dashboard reads from the runtime: only the Controller's public read methods, its event
 * hub and the backend's servers. The Controller satisfies it as it is (plus `servers`).
 */
import type { ConvergenceEstimate, LossPoint } from '../models/convergence/types';
import type { ServerSnapshot } from '../scheduling/types';
import type { RuntimeEvent } from '../runtime/events';
import type { ObservedRecord } from '../runtime/job-entry';

export interface DashboardSource {
  readonly clock: { now(): number; wallMs(): number; readonly scale: number };
  readonly events: { subscribe(fn: (e: RuntimeEvent) => void): () => void; emit(e: RuntimeEvent): void };
  list(): unknown[];
  records(): readonly ObservedRecord[];
  whatIf(id: string, ps: number, workers: number): unknown;
  convergenceData(id: string): { lossPoints: readonly LossPoint[]; estimate: ConvergenceEstimate | null };
  servers(): Promise<readonly ServerSnapshot[]>;
}

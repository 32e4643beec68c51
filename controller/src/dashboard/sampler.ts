/**
 * Feeds the dashboard's {@link History}: samples every job's prediction and the cluster's
 * utilisation on a timer, records decisions from the runtime's events, and tells SSE clients
 * (a `progress` event) when something they show changed between rounds. The I/O edge of the
 * dashboard: the only part with a timer.
 */
import type { JobView, WhatIf } from '../runtime/api-schemas';
import type { RuntimeEvent } from '../runtime/events';
import { clusterView, utilisationPoint } from './cluster-view';
import { decisionEntries, finishEntry } from './decisions';
import { History } from './history';
import { progressOf } from './job-rows';
import type { DashboardSource } from './source';

export interface Sampler {
  readonly history: History;
  /** Samples now (the timer calls it; tests too). */
  sample(): Promise<void>;
  stop(): void;
}

export interface SamplerOptions {
  readonly source: DashboardSource;
  /** Wall ms between samples. */
  readonly everyMs: number;
  readonly history?: History;
  readonly onError?: (err: unknown) => void;
}

export function startSampler(o: SamplerOptions): Sampler {
  const history = o.history ?? new History();
  const { source } = o;
  const report = o.onError ?? (() => {});
  let sampling: Promise<void> | null = null;

  const sampleNow = async (): Promise<void> => {
    const t = source.clock.wallMs();
    const views = source.list() as JobView[];
    const changed: string[] = [];
    for (const v of views) {
      const c = v.models?.convergence;
      const point = {
        t,
        stepsDone: v.observations.stepsDone,
        progress: progressOf(v),
        totalSteps:
          c?.status === 'ok' ? { value: c.predictedTotalSteps, lower: c.lower, upper: c.upper } : null,
        completion: v.plan.predictedCompletionTs,
      };
      if (history.recordPrediction(v.id, point)) changed.push(v.id);
    }
    const servers = await source.servers();
    history.recordUtilisation(utilisationPoint(t, clusterView(servers, source.records(), [])));
    if (changed.length > 0) source.events.emit({ type: 'progress', jobs: changed, ts: t });
  };
  // Never two at once: a slow servers() must not stack samples up.
  const sample = (): Promise<void> =>
    (sampling ??= sampleNow()
      .catch(report)
      .finally(() => (sampling = null)));

  const onEvent = (e: RuntimeEvent): void => {
    if (e.type === 'decision') recordDecisions(source, history, e);
    else if (e.type === 'job' && (e.phase === 'done' || e.phase === 'failed'))
      history.recordDecision(e.id, finishEntry(recordOf(source, e.id), e.phase, e.ts));
    else if (e.type === 'job' && e.phase === 'removed') history.forget(e.id);
    if (e.type !== 'progress') void sample();
  };
  const off = source.events.subscribe(onEvent);
  const timer = setInterval(() => void sample(), o.everyMs);
  timer.unref();
  void sample();
  return {
    history,
    sample,
    stop: () => {
      clearInterval(timer);
      off();
    },
  };
}

function recordDecisions(
  source: DashboardSource,
  history: History,
  e: Extract<RuntimeEvent, { type: 'decision' }>,
): void {
  const entries = decisionEntries(e, {
    record: (id) => recordOf(source, id),
    remaining: (id, shape) => {
      try {
        return (source.whatIf(id, shape.ps, shape.workers) as WhatIf).predictedRemainingSec?.value ?? null;
      } catch {
        return null; // removed meanwhile
      }
    },
  });
  for (const [id, entry] of entries) history.recordDecision(id, entry);
}

const recordOf = (source: DashboardSource, id: string) =>
  source.records().find((r) => `${r.spec.namespace}/${r.spec.name}` === id);

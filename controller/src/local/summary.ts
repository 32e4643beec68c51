/** The `--json` result of a local run: per-job JCT, restarts and shapes; message accounting. */
import { duration, fit } from '../dashboard/format';
import { shapeHistory } from '../runtime/job-record';
import { plural } from '../scheduling/words';
import type { Controller } from '../runtime/controller';
import type { JobShape } from '../scheduling/types';
import type { LocalBackend } from './backend';

export interface RunSummary {
  readonly jobs: { name: string; jct: number | null; restarts: number; shapes: JobShape[] }[];
  readonly messages: { received: number; rejected: number; lost: number; duplicates: number };
  readonly decisions: number;
  readonly avgJct: number | null;
  /** Job seconds from the first submission to the last completion; null until every job finished. */
  readonly makespan: number | null;
  /** Per task: records its sidecar sent vs the controller received (for the e2e checks). */
  readonly perTask: Record<string, { sent: number; received: number }>;
}

export function runSummary(ctl: Controller, backend: LocalBackend): RunSummary {
  const jobs = ctl.records().map((r) => ({
    name: r.spec.name,
    jct: r.finishedAt === null ? null : round(r.finishedAt - r.submittedAt),
    restarts: r.restarts,
    shapes: shapeHistory(r),
  }));
  const received = ctl.ingest.perTask();
  const perTask: Record<string, { sent: number; received: number }> = {};
  let lost = 0;
  for (const [task, sent] of backend.sentCounts()) {
    const got = received.get(task)?.received ?? 0;
    perTask[task] = { sent, received: got };
    lost += Math.max(0, sent - got);
  }
  const c = ctl.ingest.counters();
  const records = ctl.records();
  const finished = records.length > 0 && records.every((r) => r.finishedAt !== null);
  const makespan = finished
    ? round(
        Math.max(...records.map((r) => r.finishedAt ?? 0)) - Math.min(...records.map((r) => r.submittedAt)),
      )
    : null;
  const jcts = jobs.flatMap((j) => (j.jct === null ? [] : [j.jct]));
  return {
    jobs,
    messages: {
      received: c.received,
      rejected: c.rejectedTotal - c.duplicates,
      lost,
      duplicates: c.duplicates,
    },
    decisions: ctl.decisionCount,
    avgJct: jcts.length ? round(jcts.reduce((a, b) => a + b, 0) / jcts.length) : null,
    makespan,
    perTask,
  };
}

const round = (x: number): number => Math.round(x * 10) / 10;

/** The summary for people: one line per job, then the averages (job seconds); lines cut to `width` if given. */
export function summaryLines(s: RunSummary, width = Infinity): string[] {
  const name = Math.max(4, ...s.jobs.map((j) => j.name.length));
  const lines = s.jobs.map((j) => {
    const shapes = j.shapes.map((x) => `${x.ps}×${x.workers}`).join(' → ') || '—';
    const jct = j.jct === null ? 'not finished' : `JCT ${duration(j.jct)}`;
    return `  ${j.name.padEnd(name)}  ${jct.padEnd(16)} ${plural(j.restarts, 'restart').padEnd(11)} shapes ${shapes}`;
  });
  const done = s.jobs.filter((j) => j.jct !== null).length;
  return [
    `${plural(done, 'job')} of ${s.jobs.length} finished, ${plural(s.decisions, 'decision')}:`,
    ...lines,
    `average JCT ${s.avgJct === null ? '—' : duration(s.avgJct)}, makespan ${s.makespan === null ? '— (not every job finished)' : duration(s.makespan)} (job seconds)`,
    `messages: ${s.messages.received} received, ${s.messages.rejected} rejected, ${s.messages.lost} lost, ${s.messages.duplicates} duplicates`,
  ].map((l) => fit(l, width - 1));
}

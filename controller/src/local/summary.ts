/** The `--json` result of a local run: per-job JCT, restarts and shapes; message accounting. */
import { shapeHistory } from '../runtime/job-record';
import type { Controller } from '../runtime/controller';
import type { JobShape } from '../scheduling/types';
import type { LocalBackend } from './backend';

export interface RunSummary {
  readonly jobs: { name: string; jct: number | null; restarts: number; shapes: JobShape[] }[];
  readonly messages: { received: number; rejected: number; lost: number; duplicates: number };
  readonly decisions: number;
  readonly avgJct: number | null;
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
    perTask,
  };
}

const round = (x: number): number => Math.round(x * 10) / 10;

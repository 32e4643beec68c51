/**
 * What `optimus jobs`, `optimus job NAME` and `optimus why NAME` print for a person: a table like
 * `kueuectl list workloads` / `adaptdl ls`, a `kubectl describe`-like page, and the reasons a job
 * waits. Pure: views and `now` in, text out. Durations are job time (the controller's clock);
 * the one wall-clock figure (the predicted start) says so.
 */
import { formatAmount, type Resources } from '../../../../shared/src/units';
import { compactDuration, duration, fit } from '../../dashboard/format';
import { jobRows, progressOf, shapeText, type JobRow } from '../../dashboard/job-rows';
import type { JobView } from '../../runtime/api-schemas';
import type { WhyAnswer } from './why';

const dash = '-';
const pct = (p: number | null): string => (p === null ? dash : `${Math.round(p * 100)}%`);

/** Columns padded to their widest cell; the last one is cut to `width` when given (a terminal). */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  width?: number,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const line = (cells: readonly string[]): string => {
    const text = cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
    return width === undefined ? text : fit(text, width);
  };
  return [line(header), ...rows.map(line)].join('\n');
}

export function jobRowCells(r: JobRow): string[] {
  const remaining =
    r.phase === 'done'
      ? dash
      : r.predictedRemainingSec
        ? compactDuration(r.predictedRemainingSec.value)
        : dash;
  return [
    r.namespace,
    r.name,
    r.phase,
    r.shape ? `${r.shape.ps}×${r.shape.workers}` : dash,
    pct(r.progress),
    remaining,
    r.jct === null ? dash : compactDuration(r.jct),
    String(r.restarts),
    r.queuePosition === null ? dash : String(r.queuePosition),
    r.waiting ?? '',
  ];
}

export const JOB_COLUMNS = [
  'NAMESPACE',
  'NAME',
  'STATE',
  'PS×W',
  'PROGRESS',
  'REMAINING',
  'JCT',
  'RESTARTS',
  'QUEUE',
  'WAITING',
];

export function jobsText(views: readonly JobView[], width?: number): string {
  if (views.length === 0) return 'No jobs.';
  return table(JOB_COLUMNS, jobRows(views, []).map(jobRowCells), width);
}

const amounts = (r: Resources): string =>
  Object.entries(r)
    .filter(([, a]) => a > 0)
    .map(([k, a]) => `${k} ${formatAmount(k, a)}`)
    .join(', ') || 'nothing';

export function jobText(v: JobView): string {
  const row = jobRows([v], [])[0]!;
  const c = v.models?.convergence;
  const lines: [string, string][] = [
    ['Job', v.id],
    ['Mode', v.mode],
    ['State', v.phase + (row.waiting ? ` (${row.waiting})` : '')],
    ['Shape', v.shape ? shapeText(v.shape) : 'nothing runs'],
    [
      'Limits',
      `PS ${v.limits.minPs}–${v.limits.maxPs}, workers ${v.limits.minWorkers}–${v.limits.maxWorkers}`,
    ],
    ['Demand', `PS: ${amounts(v.demand.ps)}; worker: ${amounts(v.demand.worker)}`],
    ['Placement', v.placement.map((p) => `${p.role}/${p.index}@${p.server}`).join(' ') || dash],
    ['Progress', `${pct(progressOf(v))} (${Math.round(v.observations.stepsDone)} steps done)`],
    [
      'Convergence',
      c?.status === 'ok'
        ? `${Math.round(c.predictedTotalSteps)} steps (${Math.round(c.lower)}–${Math.round(c.upper)})`
        : c
          ? `not fitted: ${c.reason ?? 'too few points'}`
          : 'not fitted yet',
    ],
    [
      'Speed model',
      v.models?.speedFitted
        ? `fitted on ${v.observations.speedShapes.length} shapes`
        : `not fitted (${v.observations.speedShapes.length} shapes measured)`,
    ],
    ['Remaining', remainingText(v)],
    ['Restarts', String(v.restarts)],
    ['Shapes', v.shapes.map((s) => `${s.ps}×${s.workers}`).join(' → ') || dash],
    ['Submitted', `at job time ${duration(v.submittedAt)} (the controller's clock)`],
  ];
  if (v.jct !== null) lines.push(['JCT', duration(v.jct)]);
  if (v.end)
    lines.push(['Ended', `${v.end.outcome}: ${v.end.reason}${v.end.message ? ` (${v.end.message})` : ''}`]);
  if (v.degraded) lines.push(['Degraded', `${v.degraded.stage}: ${v.degraded.reason}`]);
  const sidecars = Object.entries(v.sidecars);
  if (sidecars.length > 0) lines.push(['Sidecars', sidecars.map(([t, s]) => `${t} ${s}`).join(', ')]);
  const w = Math.max(...lines.map(([k]) => k.length)) + 1;
  return lines.map(([k, val]) => `${`${k}:`.padEnd(w)} ${val}`).join('\n');
}

function remainingText(v: JobView): string {
  if (v.phase === 'done') return 'none (done)';
  const r = v.plan.predictedRemainingSec;
  return r
    ? `${duration(r.value)} (${duration(r.lower)} – ${duration(r.upper)}), job time`
    : 'no prediction yet';
}

/** A wall-clock time of day, labelled as such, with how far off it is. */
function wallTime(ms: number, nowMs: number): string {
  const at = new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
  return `${at} wall clock (in ${duration((ms - nowMs) / 1000)})`;
}

export function whyText(a: WhyAnswer, nowMs: number): string {
  if (!a.waiting) return `${a.id} is not waiting: ${a.phase}${a.reason ? ` (${a.reason})` : ''}.`;
  const lines = [`${a.id} waits: ${a.reason ?? 'no reason given'}`];
  lines.push(
    `Queue:           ${a.queuePosition === null ? dash : `${a.queuePosition} of ${a.queueLength}`} (jobs that hold nothing, oldest first)`,
  );
  lines.push(`Minimum shape:   ${shapeText(a.minimumShape)}, needs ${amounts(a.need)}`);
  if (a.free)
    lines.push(`Free now:        ${amounts(a.free)} (all servers, after reservations and running tasks)`);
  for (const s of a.short)
    lines.push(
      `Short:           ${s.resource}: needs ${formatAmount(s.resource, s.need)}, ${formatAmount(s.resource, s.free)} free (${formatAmount(s.resource, s.need - s.free)} more)`,
    );
  for (const n of a.noServerFits)
    lines.push(
      `Short:           no server has room for one ${n.role === 'ps' ? 'parameter server' : 'worker'} (${amounts(n.demand)}), though enough is free in total`,
    );
  if (a.free && a.short.length === 0 && a.noServerFits.length === 0)
    lines.push('Short:           nothing in total: the policy keeps it waiting (see the reason)');
  const p = a.predictedStart;
  lines.push(
    `Predicted start: ${p === null ? 'unknown' : p.afterJobs.length === 0 ? 'now (next scheduling round)' : `${wallTime(p.atMs, nowMs)}, after ${p.afterJobs.join(', ')} ${p.afterJobs.length === 1 ? 'finishes' : 'finish'}`}`,
    `                 ${a.predictedStartNote}`,
  );
  return lines.join('\n');
}

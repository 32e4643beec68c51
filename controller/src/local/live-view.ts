/**
 * The local mode's terminal view. On a terminal: a table redrawn in place, each line cut to the
 * terminal's width (so nothing wraps and no stale line survives a redraw, 80 columns included),
 * with the elapsed time, the time scale and why a job waits. Elsewhere (a pipe, a file, CI): one
 * plain line per change.
 */
import type { JobView } from '../runtime/api-schemas';
import { compactDuration, duration, fit } from '../dashboard/format';
import { jobRows, type JobRow } from '../dashboard/job-rows';
import type { Controller } from '../runtime/controller';
import { plural } from '../scheduling/words';

export interface ViewState {
  readonly elapsedSec: number;
  readonly timeScale: number;
  readonly decisions: number;
  readonly dashboard: string | null;
  readonly jobs: readonly JobRow[];
}

const shape = (j: JobRow): string => (j.shape ? `${j.shape.ps}×${j.shape.workers}` : '—');

function tail(j: JobRow): string {
  if (j.phase === 'done') return j.jct === null ? 'done' : `JCT ${compactDuration(j.jct)}`;
  if (j.phase === 'failed') return 'failed';
  // The shape column already says where a pre-run sample runs.
  const waiting = j.waiting
    ?.replace(/^pre-run: measuring speed, /, 'pre-run ')
    .replace(/ at \d+ PS × .*$/, '');
  if (waiting) return `${j.queuePosition === null ? '' : `#${j.queuePosition} `}${waiting}`;
  const r = j.predictedRemainingSec;
  return r
    ? `ETA ${compactDuration(r.value)} (${compactDuration(r.lower)}–${compactDuration(r.upper)})`
    : 'predicting…';
}

/** The table's lines, each at most `width - 1` characters (the last column never wraps). */
export function renderView(s: ViewState, width: number): string[] {
  const w = Math.max(20, width - 1);
  const name = Math.min(16, Math.max(4, ...s.jobs.map((j) => j.name.length)));
  const header = [
    `optimus local · ${duration(s.elapsedSec)} elapsed (job time, ×${s.timeScale}) · ${plural(s.jobs.length, 'job')}, ${plural(s.decisions, 'decision')}`,
    s.dashboard ? `dashboard ${s.dashboard} · shape = PS×workers` : 'shape = PS×workers',
  ];
  const rows = s.jobs.map((j) => {
    const pct = j.progress === null ? '  —' : `${String(Math.floor(j.progress * 100)).padStart(3)}%`;
    const bar =
      j.progress === null ? '░'.repeat(10) : '█'.repeat(Math.round(j.progress * 10)).padEnd(10, '░');
    return `${fit(j.name, name).padEnd(name)} ${j.state.padEnd(8)} ${shape(j).padEnd(5)} ${bar} ${pct} ↻${String(j.restarts).padEnd(2)} ${tail(j)}`;
  });
  return [...header, ...rows].map((l) => fit(l, w));
}

/** One plain line per change of a job's phase, shape or waiting reason (for output that is not a terminal). */
export function changeLines(
  before: ReadonlyMap<string, string>,
  s: ViewState,
): { lines: string[]; now: Map<string, string> } {
  const now = new Map<string, string>();
  const lines: string[] = [];
  for (const j of s.jobs) {
    const what = `${j.state} ${shape(j)}${j.waiting ? ` (${j.waiting})` : ''}${j.phase === 'done' && j.jct !== null ? ` JCT ${duration(j.jct)}` : ''}`;
    now.set(j.id, what);
    if (before.get(j.id) !== what) lines.push(`[${duration(s.elapsedSec).padStart(9)}] ${j.name}: ${what}`);
  }
  return { lines, now };
}

export function viewState(ctl: Controller, dashboard: string | null): ViewState {
  return {
    elapsedSec: ctl.clock.now(),
    timeScale: ctl.clock.scale,
    decisions: ctl.decisionCount,
    dashboard,
    jobs: jobRows(ctl.list() as JobView[], ctl.records()),
  };
}

export interface LiveViewOptions {
  readonly tty: boolean;
  readonly dashboard?: string | null;
  readonly everyMs?: number;
}

export function startLiveView(
  ctl: Controller,
  out: NodeJS.WritableStream & { columns?: number; on?(event: 'resize', fn: () => void): unknown },
  o: LiveViewOptions,
): { stop(): void } {
  let lines = 0;
  let last = new Map<string, string>();
  const draw = (): void => {
    const state = viewState(ctl, o.dashboard ?? null);
    if (!o.tty) {
      const c = changeLines(last, state);
      last = c.now;
      if (c.lines.length > 0) out.write(`${c.lines.join('\n')}\n`);
      return;
    }
    const text = renderView(state, out.columns ?? 80);
    // Up to the first line of the last drawing, clear to the end of the screen, draw again.
    out.write(`${lines > 0 ? `\x1b[${lines}F\x1b[J` : ''}${text.join('\n')}\n`);
    lines = text.length;
  };
  const timer = setInterval(draw, o.everyMs ?? 1000);
  // A narrower terminal would wrap the old lines: clear the screen and draw afresh.
  const onResize = (): void => {
    if (!o.tty) return;
    out.write('\x1b[2J\x1b[H');
    lines = 0;
    draw();
  };
  out.on?.('resize', onResize);
  draw();
  let done = false;
  return {
    // Idempotent; draws a last time so the final state stays on screen.
    stop: () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      (out as { off?(e: string, fn: () => void): unknown }).off?.('resize', onResize);
      draw();
    },
  };
}

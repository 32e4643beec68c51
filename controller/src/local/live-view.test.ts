import { describe, expect, it } from 'vitest';
import type { JobRow } from '../dashboard/job-rows';
import { changeLines, renderView, type ViewState } from './live-view';

const row = (name: string, o: Partial<JobRow> = {}): JobRow => ({
  id: `default/${name}`,
  name,
  namespace: 'default',
  mode: 'sync',
  phase: 'running',
  shape: { ps: 2, workers: 4 },
  progress: 0.42,
  stepsDone: 420,
  predictedCompletion: null,
  predictedRemainingSec: { value: 336, lower: 230, upper: 540 },
  restarts: 3,
  queuePosition: null,
  waiting: null,
  jct: null,
  submittedAt: 0,
  finishedAt: null,
  ...o,
  state: o.state ?? o.phase ?? 'running',
});

const state = (jobs: JobRow[]): ViewState => ({
  elapsedSec: 538.4,
  timeScale: 20,
  decisions: 1,
  dashboard: 'http://127.0.0.1:8080/dashboard/',
  jobs,
});

const jobs = [
  row('resnet-50'),
  row('a-very-long-job-name-that-goes-on', {
    phase: 'waiting',
    shape: null,
    progress: null,
    queuePosition: 2,
    waiting: 'minimum shape 1 PS + 1 worker does not fit the free resources',
    predictedRemainingSec: null,
  }),
  row('done-one', { phase: 'done', shape: null, progress: 1, jct: 731.8 }),
  row('sampling', {
    phase: 'pre-run',
    shape: { ps: 1, workers: 3 },
    progress: null,
    waiting: 'pre-run: measuring speed, sample 2 of 4 at 1 PS × 3 workers',
  }),
];

describe('terminal view', () => {
  it.each([80, 60, 120, 200])(
    'never writes a line as wide as a %i-column terminal (no wrap, no stale line)',
    (width) => {
      for (const line of renderView(state(jobs), width)) expect([...line].length).toBeLessThan(width);
    },
  );

  it('shows the elapsed time, the time scale, plurals, the ETA and why a job waits', () => {
    const lines = renderView(state(jobs), 200);
    expect(lines[0]).toBe('optimus local · 8 min 58 s elapsed (job time, ×20) · 4 jobs, 1 decision');
    expect(lines[2]).toMatch(/^resnet-50 +running +2×4 +████░░░░░░ {2}42% ↻3 {2}ETA 5m36s \(3m50s–9m\)$/);
    expect(lines[3]).toContain('#2 minimum shape 1 PS + 1 worker does not fit the free resources');
    expect(lines[4]).toMatch(/done +— +██████████ 100% ↻3 {2}JCT 12m12s$/);
    // The shape column says where the sample runs; the words do not repeat it.
    expect(lines[5]).toMatch(/pre-run +1×3 .* pre-run sample 2 of 4$/);
  });

  it('a job mid-rollout reads "resizing" with the reason, in the table and in the change lines', () => {
    const resizing = row('grower', {
      state: 'resizing',
      shape: null,
      progress: 0.3,
      waiting: 'restarting at a new shape (checkpoint → restart)',
    });
    expect(renderView(state([resizing]), 200)[2]).toMatch(/^grower +resizing — .* restarting at a new shape/);
    expect(changeLines(new Map(), state([resizing])).lines).toEqual([
      '[8 min 58 s] grower: resizing — (restarting at a new shape (checkpoint → restart))',
    ]);
  });

  it('without a terminal: one plain line per change, nothing when nothing changed', () => {
    const first = changeLines(new Map(), state(jobs));
    expect(first.lines).toHaveLength(4);
    expect(first.lines[0]).toBe('[8 min 58 s] resnet-50: running 2×4');
    expect(changeLines(first.now, state(jobs)).lines).toEqual([]);
    const moved = changeLines(
      first.now,
      state([row('resnet-50', { shape: { ps: 3, workers: 6 } }), ...jobs.slice(1)]),
    );
    expect(moved.lines).toEqual(['[8 min 58 s] resnet-50: running 3×6']);
    for (const l of first.lines) expect(l).not.toContain('\x1b');
  });
});

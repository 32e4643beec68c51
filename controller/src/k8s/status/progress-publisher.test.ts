import { describe, expect, it } from 'vitest';
import type { JobReport } from '../../runtime/backend';
import { JobNotFoundError } from '../api/job-api';
import { ProgressPublisher, toProgressReport } from './progress-publisher';
import type { ProgressReport } from './status-reporter';

const report = (o: Partial<JobReport> = {}): JobReport => ({
  jobId: 'default/a',
  phase: 'running',
  current: null,
  target: null,
  restarts: 0,
  end: null,
  reason: null,
  degraded: null,
  restartCost: {},
  progress: 0.4,
  predictedCompletionMs: 1_900_000_000_000,
  models: { convergence: { status: 'ok', beta: [1, 2, 3] }, speedFitted: true },
  ...o,
});

class Sink {
  readonly writes: { id: string; r: ProgressReport }[] = [];
  failWith: Error | null = null;
  async report(id: string, r: ProgressReport): Promise<void> {
    await new Promise((res) => setTimeout(res, 1));
    if (this.failWith) throw this.failWith;
    this.writes.push({ id, r });
  }
}

describe('ProgressPublisher', () => {
  it('writes a job once per change of what the columns show', async () => {
    const sink = new Sink();
    const p = new ProgressPublisher(sink);
    const rounds: { name: string; r: JobReport; writes: number }[] = [
      { name: 'first report', r: report(), writes: 1 },
      { name: 'same figures', r: report(), writes: 1 },
      { name: 'progress moves within the percent', r: report({ progress: 0.4004 }), writes: 1 },
      {
        name: 'prediction moves by seconds',
        r: report({ predictedCompletionMs: 1_900_000_010_000 }),
        writes: 1,
      },
      {
        name: 'models change, columns do not',
        r: report({ models: { speedFitted: true, convergence: { status: 'ok', beta: [9] } } }),
        writes: 1,
      },
      { name: 'progress moves a percent', r: report({ progress: 0.41 }), writes: 2 },
      {
        name: 'prediction moves by minutes',
        r: report({ progress: 0.41, predictedCompletionMs: 1_900_000_300_000 }),
        writes: 3,
      },
      {
        name: 'phase changes',
        r: report({ progress: 1, phase: 'done', predictedCompletionMs: null }),
        writes: 4,
      },
    ];
    for (const round of rounds) {
      p.push([round.r]);
      await p.idle();
      expect(sink.writes.length, round.name).toBe(round.writes);
    }
    expect(sink.writes.at(-1)!.r).toEqual({
      progress: 1,
      predictedCompletionSec: null,
      models: report().models,
      finished: true,
    });
  });

  it('coalesces: reports pushed while a write is in flight leave only the newest per job', async () => {
    const sink = new Sink();
    const p = new ProgressPublisher(sink);
    p.push([report({ jobId: 'default/a' }), report({ jobId: 'default/b' })]);
    for (let i = 1; i <= 5; i++) p.push([report({ jobId: 'default/b', progress: 0.4 + i / 10 })]);
    await p.idle();
    expect(sink.writes.map((w) => [w.id, w.r.progress])).toEqual([
      ['default/a', 0.4],
      ['default/b', 0.9],
    ]);
  });

  it('skips a deleted job quietly, reports other errors, and retries after a failure', async () => {
    const sink = new Sink();
    const errors: unknown[] = [];
    const p = new ProgressPublisher(sink, { onError: (err) => errors.push(err) });
    sink.failWith = new JobNotFoundError('default/a');
    p.push([report()]);
    await p.idle();
    sink.failWith = new Error('boom');
    p.push([report()]);
    await p.idle();
    expect(errors).toEqual([sink.failWith]);
    sink.failWith = null;
    p.push([report()]);
    await p.idle();
    expect(sink.writes).toHaveLength(1);
  });

  it('leaves out what is unknown', () => {
    expect(toProgressReport(report({ progress: null, predictedCompletionMs: null, models: null }))).toEqual(
      {},
    );
  });
});

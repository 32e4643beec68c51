import { describe, expect, it } from 'vitest';
import type { ObservedRecord } from '../runtime/job-entry';
import { newJobRecord } from '../runtime/job-record';
import { testJobSpec } from '../runtime/testing';
import { decisionEntries, finishEntry } from './decisions';

const rec = (o: Partial<ObservedRecord>): ObservedRecord => ({
  ...newJobRecord(testJobSpec('a'), 0),
  current: null,
  inFlight: false,
  ...o,
});
const preRun = rec({
  phase: 'pre-run',
  preRun: {
    shapes: [
      { ps: 1, workers: 1 },
      { ps: 2, workers: 3 },
    ],
    done: 1,
  },
});
const running = rec({ phase: 'running' });
const remaining = (_id: string, s: { ps: number; workers: number }) => 1000 / (s.ps + s.workers);

const why = (r: ObservedRecord, action: Record<string, unknown>) =>
  decisionEntries(
    { round: 7, ts: 5, actions: [{ jobId: 'default/a', ...action }] },
    { record: () => r, remaining },
  )[0]?.[1];

describe('decisions in words', () => {
  it.each([
    [
      'a pre-run sample',
      preRun,
      { kind: 'resize', from: { ps: 1, workers: 1 }, shape: { ps: 2, workers: 3 } },
      'pre-run: next speed sample 2 of 2 at 2 PS × 3 workers',
    ],
    [
      'a scheduled start',
      running,
      { kind: 'start', shape: { ps: 1, workers: 1 } },
      'scheduled at 1 PS × 1 worker; predicted remaining 8 min 20 s',
    ],
    [
      'a grow',
      running,
      { kind: 'resize', from: { ps: 1, workers: 1 }, shape: { ps: 2, workers: 3 } },
      'resized 1 PS × 1 worker → 2 PS × 3 workers: predicted remaining 8 min 20 s → 3 min 20 s (the policy gave it more tasks)',
    ],
    [
      'a shrink',
      running,
      { kind: 'resize', from: { ps: 2, workers: 3 }, shape: { ps: 1, workers: 2 } },
      'resized 2 PS × 3 workers → 1 PS × 2 workers: predicted remaining 3 min 20 s → 5 min 33 s (the policy gave some of its tasks to other jobs)',
    ],
    [
      'a move: the same shape on other servers is no "4 × 2 → 4 × 2" (issue 30)',
      running,
      {
        kind: 'resize',
        from: { ps: 1, workers: 1 },
        shape: { ps: 1, workers: 1 },
        placement: [
          { role: 'ps', index: 0, server: 'node-b' },
          { role: 'worker', index: 0, server: 'node-b' },
        ],
      },
      'moved to other servers at the same shape, 1 PS × 1 worker: now on node-b (2) (checkpoint → restart)',
    ],
    ['a suspension', running, { kind: 'suspend', reason: 'no room' }, 'suspended: no room'],
    [
      'a straggler',
      running,
      { kind: 'replace-worker', index: 2, server: 'node-b' },
      'worker 2 ran slower than its peers (a straggler) or went silent: replaced by a new one on node-b',
    ],
  ] as const)('%s', (_n, r, action, want) => {
    const e = why(r, action);
    expect(e?.why).toBe(want);
    expect(e?.round).toBe(7);
    expect(e?.preRun).toBe(r === preRun);
  });

  it('skips what is not a plan action and words a finish', () => {
    expect(
      decisionEntries(
        { round: 1, ts: 0, actions: [null, { kind: 'x', jobId: 'a' }] },
        { record: () => running, remaining },
      ),
    ).toEqual([]);
    const converged = { outcome: 'succeeded' as const, reason: 'Converged', message: 'the rule held' };
    expect(finishEntry(rec({ finishedAt: 75, submittedAt: 0, end: converged }), 'done', 9).why).toBe(
      'converged: the rule held (JCT 1 min 15 s)',
    );
    expect(finishEntry(rec({ finishedAt: 75, submittedAt: 0 }), 'done', 9).why).toBe(
      'finished (JCT 1 min 15 s)',
    );
  });
});

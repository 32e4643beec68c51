import { describe, expect, it } from 'vitest';
import type { JobView } from '../runtime/api-schemas';
import { newJobRecord } from '../runtime/job-record';
import { testJobSpec } from '../runtime/testing';
import { jobRows, progressOf, queuePositions, waitingInWords } from './job-rows';
import { freeResources, shortageInWords } from './shortage';

/** A job view with only what the table reads. */
const view = (name: string, o: Partial<JobView> = {}): JobView =>
  ({
    id: `default/${name}`,
    name,
    namespace: 'default',
    mode: 'sync',
    phase: 'pending',
    reason: null,
    shape: null,
    restarts: 0,
    submittedAt: 0,
    jct: null,
    observations: { records: 0, lossPoints: 0, stepsDone: 0, speedShapes: [] },
    models: null,
    plan: { predictedCompletionTs: null, predictedRemainingSec: null },
    ...o,
  }) as JobView;

const fitted = (stepsDone: number, remaining: number): Partial<JobView> => ({
  observations: { records: 1, lossPoints: 1, stepsDone, speedShapes: [] },
  models: {
    convergence: {
      status: 'ok',
      predictedTotalSteps: stepsDone + remaining,
      lower: 0,
      upper: 0,
      beta: [1, 1, 0],
      fitStartStep: 0,
    },
    speedFitted: true,
    remaining: { steps: remaining, lower: 0, upper: 0 },
  },
});

describe('jobs table', () => {
  it.each([
    ['no model yet', view('a'), null],
    ['a converged fit', view('a', { phase: 'running', ...fitted(300, 700) }), 0.3],
    [
      'a fit that is not converged',
      view('a', {
        ...fitted(300, 700),
        models: { ...fitted(300, 700).models!, convergence: { status: 'insufficient-data', reason: 'few' } },
      }),
      null,
    ],
    ['done', view('a', { phase: 'done' }), 1],
  ])('progress: %s', (_name, v, want) => expect(progressOf(v)).toBe(want));

  it('ranks the jobs that hold nothing by submission time', () => {
    const views = [
      view('late', { phase: 'waiting', submittedAt: 50 }),
      view('running', { phase: 'running', shape: { ps: 1, workers: 1 }, submittedAt: 0 }),
      view('early', { phase: 'pending', submittedAt: 10 }),
      view('tie-b', { phase: 'pending', submittedAt: 30 }),
      view('tie-a', { phase: 'pending', submittedAt: 30 }),
    ];
    expect([...queuePositions(views)]).toEqual([
      ['default/early', 1],
      ['default/tie-a', 2],
      ['default/tie-b', 3],
      ['default/late', 4],
    ]);
  });

  it('says in words why a job does not run', () => {
    const rec = {
      ...newJobRecord(testJobSpec('a'), 0),
      preRun: {
        shapes: [
          { ps: 1, workers: 1 },
          { ps: 2, workers: 3 },
        ],
        done: 1,
      },
    };
    expect(waitingInWords(view('a'), rec)).toBe('submitted; its pre-run starts at the next round');
    expect(waitingInWords(view('a', { reason: 'waiting for room to pre-run' }), rec)).toBe(
      'waiting for room to pre-run',
    );
    expect(waitingInWords(view('a', { phase: 'pre-run', shape: { ps: 2, workers: 3 } }), rec)).toBe(
      'pre-run: measuring speed, sample 2 of 2 at 2 PS × 3 workers',
    );
    expect(
      waitingInWords(
        view('a', { phase: 'waiting', reason: 'minimum shape 1 PS + 1 worker does not fit' }),
        rec,
      ),
    ).toBe('minimum shape 1 PS + 1 worker does not fit');
    expect(waitingInWords(view('a', { phase: 'running', shape: { ps: 1, workers: 1 } }), rec)).toBeNull();
    const ran = {
      ...rec,
      spans: [{ shape: { ps: 1, workers: 1 }, since: 0, until: 10, fitted: false }],
    };
    expect(waitingInWords(view('a', { phase: 'running' }), ran)).toMatch(/restarting/);
    expect(
      waitingInWords(view('a', { phase: 'running', state: 'resizing', shape: { ps: 1, workers: 1 } }), ran),
    ).toMatch(/restarting at a new shape/);
    // Its first start is a rollout too, but nothing restarts.
    expect(waitingInWords(view('a', { phase: 'pre-run', state: 'resizing' }), rec)).toBe(
      'starting its tasks',
    );
  });

  it('names the resource a waiting job is short of (issue 30)', () => {
    const rec = { ...newJobRecord(testJobSpec('a'), 0), current: null, inFlight: false };
    const busy = {
      inFlight: false,
      ...newJobRecord(testJobSpec('b'), 0),
      current: {
        shape: { ps: 1, workers: 6 },
        placement: [
          { role: 'ps' as const, index: 0, server: 'n1' },
          ...[0, 1, 2, 3, 4, 5].map((i) => ({
            role: 'worker' as const,
            index: i,
            server: i < 3 ? 'n1' : 'n2',
          })),
        ],
      },
    };
    const servers = [
      { name: 'n1', capacity: { cpu: 4 }, reserved: {} },
      { name: 'n2', capacity: { cpu: 4 }, reserved: { cpu: 0 } },
    ];
    const waiting = view('a', {
      phase: 'waiting',
      reason: 'minimum shape 1 PS + 1 worker does not fit the free resources',
    });
    const cluster = { free: freeResources(servers, [rec, busy]), capacity: { cpu: 8 } };
    expect(waitingInWords(waiting, rec, cluster)).toBe(
      'minimum shape 1 PS + 1 worker does not fit the free resources: short of cpu: needs 2, 1 of 8 free (its smallest shape, 1 PS + 1 worker)',
    );
    // Enough in total, but one free CPU on each server: the tasks cannot be placed together.
    const spread = { free: freeResources(servers, [rec]), capacity: { cpu: 8 } };
    const tight = new Map([
      ['n1', { cpu: 1 }],
      ['n2', { cpu: 1 }],
    ]);
    expect(shortageInWords(rec.spec, tight, { cpu: 8 })).toMatch(
      /^enough free in total \(cpu 2\), but spread/,
    );
    expect(
      shortageInWords(
        rec.spec,
        new Map([
          ['n1', { cpu: 0.5 }],
          ['n2', { cpu: 3 }],
        ]),
        { cpu: 8 },
      ),
    ).toMatch(/^enough free in total \(cpu 3.5\)/);
    // A job that does not wait for room gets no shortage appended.
    expect(
      waitingInWords(view('a', { phase: 'running', shape: { ps: 1, workers: 1 } }), rec, spread),
    ).toBeNull();
  });

  it('builds one row per job, in order', () => {
    const rows = jobRows(
      [view('a', { phase: 'running', shape: { ps: 2, workers: 4 }, restarts: 3 }), view('b')],
      [],
    );
    expect(rows.map((r) => [r.name, r.shape, r.restarts, r.queuePosition])).toEqual([
      ['a', { ps: 2, workers: 4 }, 3, null],
      ['b', null, 0, 1],
    ]);
  });
});

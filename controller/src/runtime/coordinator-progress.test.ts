/**
 * TF 2.x ParameterServerStrategy prints its progress on the coordinator (chief) only (issue 26):
 * the coordinator's Keras lines, exactly as TF 2.x prints them into a log file, through the sidecar's
 * own parsing path, are the job's progress, loss and speed — where before the models never read
 * the coordinator and the job was scheduled from priors.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../../shared/src/schemas';
import type { TaskId } from '../../../shared/src/topics';
import { parseBuffer } from '../../../sidecar/src/parse/parse-buffer';
import type { JobSpec } from './job-spec';
import { JobObservations, type ShapeSpan } from './observations';
import { testJobSpec } from './testing';

const FIXTURE = join(import.meta.dirname, '../../../sidecar/test/fixtures/tf2-coordinator.log');
const spec = (over: Partial<JobSpec>): JobSpec => ({
  ...testJobSpec('mnist-ps'),
  mode: 'async',
  batchSize: 64,
  stepsPerEpoch: 500,
  ...over,
});
const coordinator: TaskId = { namespace: 'default', job: 'mnist-ps', role: 'scheduler', index: 0 };
const spans: ShapeSpan[] = [{ shape: { ps: 1, workers: 2 }, since: 0, until: null, fitted: false }];

/** The coordinator's log as the sidecar turns it into records (one second apart). */
function records(): MetricsRecord[] {
  const { records: drafts } = parseBuffer(readFileSync(FIXTURE), { batchSize: 64 });
  return drafts.map((d, seq) => ({ ...d, v: 1, seq, ts: 1 + seq }));
}

describe('progress from the coordinator (progressFrom: coordinator)', () => {
  it('reads global steps, the loss and the job’s step rate from the coordinator’s Keras lines', () => {
    const o = new JobObservations(spec({ progressFrom: 'coordinator' }));
    for (const r of records()) o.add(coordinator, r, spans);
    // Three epochs of 500 global steps: the coordinator's counter is not multiplied by the workers.
    expect(o.stepsDone()).toBe(1500);
    // (A batch record counts MXNet's 0-based batch index, so Keras' `120/500` lands one step on.)
    expect(o.lossPoints()).toEqual([
      { step: 121, loss: 1.2177 },
      { step: 500, loss: 0.6043 },
      { step: 751, loss: 0.3321 },
      { step: 1000, loss: 0.3077 },
      { step: 1500, loss: 0.2512 },
    ]);
    // The epoch lines' ms/step is the job's rate (the first, warm-up, not counted): 44 and 42 ms.
    const [sample] = o.speedSamples(spans);
    expect(sample?.workers).toBe(2);
    expect(sample?.stepsPerSec).toBeCloseTo((1 / 0.044 + 1 / 0.042) / 2, 6);
    expect(o.samplesNeeded(1, 2)).toBe(1);
  });

  it('leaves a worker-progress job as it was: the coordinator’s lines count for nothing there', () => {
    const o = new JobObservations(spec({ progressFrom: 'workers' }));
    for (const r of records()) o.add(coordinator, r, spans);
    expect(o.stepsDone()).toBe(0);
    expect(o.speedSamples(spans)).toEqual([]);
    expect(o.samplesNeeded(1, 2)).toBe(2);
  });

  it('ignores worker lines of a coordinator-progress job (they would double-count its steps)', () => {
    const o = new JobObservations(spec({ progressFrom: 'coordinator' }));
    const worker: TaskId = { ...coordinator, role: 'worker' };
    for (const r of records()) o.add(worker, r, spans);
    expect(o.stepsDone()).toBe(0);
  });
});

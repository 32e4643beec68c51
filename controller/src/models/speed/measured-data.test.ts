import { describe, expect, it } from 'vitest';
import { measuredSpeedAt, parseMeasuredSpeeds, samplesOf } from './measured-data';

const HEADER =
  'model,kvstore,global_batch,num_ps,num_workers,worker_samples_per_sec,ps_cpu_usage,worker_cpu_usage';

describe('parseMeasuredSpeeds', () => {
  it('groups rows by model and computes steps/s = Σ samples/s ÷ global batch', () => {
    const data = parseMeasuredSpeeds(
      [
        HEADER,
        'm1,dist_sync,32,1,2,8;8,1.9,0.4;0.4',
        'm1,dist_sync,32,2,1,16,1;1,0.9',
        'm2,dist_async,10,1,1,5,1,1',
        '',
      ].join('\n'),
    );
    expect(data.excludedRows).toBe(0);
    expect(data.jobs.map((j) => [j.model, j.mode, j.globalBatch, j.shapes.length])).toEqual([
      ['m1', 'sync', 32, 2],
      ['m2', 'async', 10, 1],
    ]);
    expect(measuredSpeedAt(data.jobs[0]!, 2, 1)).toBe(0.5);
    expect(measuredSpeedAt(data.jobs[0]!, 3, 1)).toBeUndefined();
    expect(samplesOf(data.jobs[0]!)).toEqual([
      { ps: 1, workers: 2, stepsPerSec: 0.5 },
      { ps: 2, workers: 1, stepsPerSec: 0.5 },
    ]);
  });

  it('leaves out rows with a zero worker speed and counts them', () => {
    const data = parseMeasuredSpeeds(
      [HEADER, 'm,dist_sync,32,1,2,8;0,1,1;1', 'm,dist_sync,32,1,1,8,1,1'].join('\r\n'),
    );
    expect(data.excludedRows).toBe(1);
    expect(data.jobs[0]!.shapes).toHaveLength(1);
  });

  it.each([
    { name: 'non-integer num_ps', row: 'm,dist_sync,32,1.5,1,8,1,1', error: /line 2: num_ps/ },
    {
      name: 'wrong number of worker speeds',
      row: 'm,dist_sync,32,1,3,8;8,1,1',
      error: /line 2: worker_samples_per_sec must hold 3/,
    },
    { name: 'negative speed', row: 'm,dist_sync,32,1,1,-2,1,1', error: /worker_samples_per_sec/ },
    { name: 'text speed', row: 'm,dist_sync,32,1,1,fast,1,1', error: /worker_samples_per_sec/ },
    { name: 'missing global batch', row: 'm,dist_sync,,1,1,8,1,1', error: /global_batch/ },
    { name: 'unknown kvstore', row: 'm,local,32,1,1,8,1,1', error: /kvstore/ },
    { name: 'empty model', row: ',dist_sync,32,1,1,8,1,1', error: /model is empty/ },
  ])('rejects a bad row with a clear error: $name', ({ row, error }) => {
    expect(() => parseMeasuredSpeeds([HEADER, row].join('\n'))).toThrow(error);
  });

  it('rejects a header without the needed columns, and a file without data', () => {
    expect(() => parseMeasuredSpeeds('model,num_ps\nm,1')).toThrow(
      /header lacks column\(s\) global_batch, num_workers/,
    );
    expect(() => parseMeasuredSpeeds(`${HEADER}\n`)).toThrow(/no data rows/);
  });
});

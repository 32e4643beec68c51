import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePolluxPlacements, parsePolluxScalability, placementShape } from './pollux-data';

const DATA = join(__dirname, '../../../../test/data/pollux');

describe('placementShape', () => {
  it.each([
    { placement: '1', workers: 1, servers: 1 },
    { placement: '4', workers: 4, servers: 1 },
    { placement: '22', workers: 4, servers: 2 },
    { placement: '1234', workers: 10, servers: 4 },
    { placement: '4044', workers: 12, servers: 3 },
  ])('$placement → $workers GPUs on $servers nodes', ({ placement, workers, servers }) => {
    expect(placementShape(placement)).toEqual({ workers, servers });
  });

  it.each(['', '2a', '1.5', '000'])('rejects "%s"', (placement) => {
    expect(() => placementShape(placement)).toThrow(/placement/);
  });
});

describe('parsePolluxPlacements', () => {
  it('reads the columns and turns step time into steps/s', () => {
    const rows = parsePolluxPlacements(
      'placement,local_bsz,step_time,sync_time\n22,32,0.5,0.1\n\n1,8,0.25,0.001\n',
    );
    expect(rows).toEqual([
      { placement: '22', workers: 4, servers: 2, localBatch: 32, stepsPerSec: 2 },
      { placement: '1', workers: 1, servers: 1, localBatch: 8, stepsPerSec: 4 },
    ]);
  });

  it.each([
    { name: 'a missing column', text: 'placement,local_bsz\n1,2\n', error: /lacks column\(s\) step_time/ },
    {
      name: 'a bad placement',
      text: 'placement,local_bsz,step_time\n1x,2,0.1\n',
      error: /line 2: placement/,
    },
    {
      name: 'a zero step time',
      text: 'placement,local_bsz,step_time\n1,2,0.1\n2,4,0\n',
      error: /line 3: step_time/,
    },
    { name: 'an empty batch', text: 'placement,local_bsz,step_time\n1,,0.1\n', error: /line 2: local_bsz/ },
  ])('names the line of $name', ({ text, error }) => {
    expect(() => parsePolluxPlacements(text)).toThrow(error);
  });

  it('reads every row of the shipped tables', () => {
    const counts: Record<string, number> = {};
    for (const model of ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3']) {
      const rows = parsePolluxPlacements(readFileSync(join(DATA, model, 'placements.csv'), 'utf8'));
      counts[model] = rows.length;
      expect(Math.max(...rows.map((r) => r.servers))).toBe(4);
      expect(Math.max(...rows.map((r) => r.workers))).toBe(16);
      expect(new Set(rows.map((r) => r.placement)).size).toBe(108);
    }
    expect(counts).toEqual({
      bert: 540,
      cifar10: 1183,
      deepspeech2: 754,
      imagenet: 864,
      ncf: 1661,
      yolov3: 540,
    });
  });
});

describe('parsePolluxScalability', () => {
  it('reads nodes and replicas, and rejects more nodes than replicas', () => {
    expect(
      parsePolluxScalability('num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,12,4,2,1\n'),
    ).toEqual([{ placement: '6x12', workers: 12, servers: 6, localBatch: 4, stepsPerSec: 0.5 }]);
    expect(() => parsePolluxScalability('num_nodes,num_replicas,local_bsz,step_time\n6,4,4,2\n')).toThrow(
      /line 2/,
    );
  });

  it('the shipped tables reach beyond every placement row (6–16 nodes)', () => {
    const rows = parsePolluxScalability(readFileSync(join(DATA, 'imagenet', 'scalability.csv'), 'utf8'));
    expect(Math.min(...rows.map((r) => r.servers))).toBe(6);
    expect(Math.max(...rows.map((r) => r.servers))).toBe(16);
    expect(Math.max(...rows.map((r) => r.workers))).toBe(64);
  });
});

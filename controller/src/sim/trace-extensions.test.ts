/** The optional trace fields for what the simulator's speed truth can add: slow servers, parameter blocks. */
import { describe, expect, it } from 'vitest';
import { resnet50Blocks } from '../scheduling/paa';
import { loadMeasured } from './load';
import { parseTrace, serializeTrace } from './trace';
import { buildWorkload } from './workloads';

const base = () =>
  JSON.parse(serializeTrace(buildWorkload('paper', { seed: 1, measured: loadMeasured(), jobs: 2 }))) as {
    cluster: { servers: { name: string }[]; slowdowns?: unknown };
    jobs: { parameterBlocks?: unknown }[];
  };

describe('trace: slowdowns and parameter blocks', () => {
  it('round-trips a trace that carries both', () => {
    const t = base();
    t.cluster.slowdowns = [
      { server: 'gpu-1', from: 600, to: 1800, factor: 3 },
      { server: 'gpu-2', from: 0, factor: 1.5 },
    ];
    t.jobs[0]!.parameterBlocks = resnet50Blocks();
    const parsed = parseTrace(t);
    expect(parseTrace(JSON.parse(serializeTrace(parsed)))).toEqual(parsed);
    expect(parsed.cluster.slowdowns).toHaveLength(2);
    expect(parsed.jobs[0]!.parameterBlocks).toHaveLength(157);
  });

  it.each([
    [[{ server: 'nope', from: 0, factor: 2 }], 'unknown server "nope"'],
    [[{ server: 'gpu-1', from: 10, to: 5, factor: 2 }], 'to must be after from'],
    [[{ server: 'gpu-1', from: 0, factor: 0.5 }], 'cluster.slowdowns.0.factor'],
  ])('refuses slowdowns %j', (slowdowns, message) => {
    const t = base();
    t.cluster.slowdowns = slowdowns;
    expect(() => parseTrace(t)).toThrow(message);
  });

  it('refuses a parameter block of size 0', () => {
    const t = base();
    t.jobs[0]!.parameterBlocks = [{ name: 'w', size: 0 }];
    expect(() => parseTrace(t)).toThrow('jobs.0.parameterBlocks.0.size');
  });
});

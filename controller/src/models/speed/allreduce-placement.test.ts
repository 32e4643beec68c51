import { describe, expect, it } from 'vitest';
import { fitAllReduceSpeed } from './allreduce-fit';
import { packedServers, packedSpeed, serversSpanned } from './allreduce-placement';

describe('serversSpanned', () => {
  it.each([
    { name: 'none', servers: [], want: 0 },
    { name: 'one server', servers: ['a', 'a', 'a'], want: 1 },
    { name: 'three servers, uneven', servers: ['a', 'b', 'a', 'c'], want: 3 },
  ])('$name', ({ servers, want }) => {
    expect(serversSpanned(servers)).toBe(want);
  });
});

describe('packedServers', () => {
  it.each([
    { workers: 1, slots: 8, want: 1 },
    { workers: 8, slots: 8, want: 1 },
    { workers: 9, slots: 8, want: 2 },
    { workers: 10, slots: 4, want: 3 },
    { workers: 3, slots: 1, want: 3 },
    { workers: 1.5, slots: 1, want: 1 },
  ])('$workers workers on servers of $slots slots → $want', ({ workers, slots, want }) => {
    expect(packedServers(workers, slots)).toBe(want);
  });

  it('rejects impossible inputs', () => {
    expect(() => packedServers(0, 4)).toThrow(/workers/);
    expect(() => packedServers(4, 0)).toThrow(/slotsPerServer/);
    expect(() => packedServers(4, 2.5)).toThrow(/slotsPerServer/);
  });
});

describe('packedSpeed', () => {
  const model = fitAllReduceSpeed(
    [
      { workers: 1, servers: 1, stepsPerSec: 10 },
      { workers: 4, servers: 1, stepsPerSec: 30 },
      { workers: 8, servers: 2, stepsPerSec: 35 },
      { workers: 16, servers: 4, stepsPerSec: 50 },
    ],
    { globalBatch: 512 },
  );

  it('is the model’s prediction on the fewest servers', () => {
    expect(packedSpeed(model, 10, 4)).toEqual(model.predict(10, 3));
    expect(packedSpeed(model, 4, 4)).toEqual(model.predict(4, 1));
  });

  it('packing never predicts slower than spreading the same workers wider', () => {
    for (let w = 2; w <= 16; w++)
      expect(packedSpeed(model, w, 4).stepsPerSec).toBeGreaterThanOrEqual(model.predict(w, w).stepsPerSec);
  });
});

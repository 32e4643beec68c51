import { describe, expect, it } from 'vitest';
import { ALLREDUCE_DIM, ALLREDUCE_TERMS, termSupport, writeAllReduceTerms } from './allreduce-law';

const terms = (w: number, n: number, m: number): Record<string, number> => {
  const out = new Float64Array(ALLREDUCE_DIM);
  writeAllReduceTerms(w, n, m, out);
  return Object.fromEntries(ALLREDUCE_TERMS.map((t, j) => [t, out[j] as number]));
};

describe('the all-reduce law’s terms', () => {
  it.each([
    { name: 'one worker: compute only', w: 1, n: 1, m: 32, ring: 0, ringR: 0, network: 0 },
    {
      name: 'two workers, one server: ring, no retrogression',
      w: 2,
      n: 1,
      m: 16,
      ring: 1,
      ringR: 0,
      network: 0,
    },
    { name: 'eight workers on one server', w: 8, n: 1, m: 4, ring: 1, ringR: 6, network: 0 },
    { name: 'eight workers on two servers', w: 8, n: 2, m: 4, ring: 1, ringR: 6, network: 1 },
  ])('$name', ({ w, n, m, ring, ringR, network }) => {
    const t = terms(w, n, m);
    expect(t).toMatchObject({ compute: 1, 'compute*m': m, 'compute*m^2': m * m, ring, 'ring*r': ringR });
    expect(t['ring*r^2']).toBe(ringR * ringR);
    expect(t).toMatchObject({
      network,
      'network*r': network * ringR,
      'network*r^2': network * ringR * ringR,
    });
  });
});

describe('termSupport', () => {
  const active = (rows: { workers: number; servers: number }[]): string[] => {
    const s = termSupport(rows.map((r) => ({ ...r, localBatch: 8 })));
    return ALLREDUCE_TERMS.filter((_, j) => s.active[j]);
  };
  it.each([
    {
      name: 'one worker only: compute',
      rows: [{ workers: 1, servers: 1 }],
      want: ['compute', 'compute*m', 'compute*m^2'],
    },
    {
      name: 'one server, up to 4 workers: compute and ring',
      rows: [
        { workers: 1, servers: 1 },
        { workers: 4, servers: 1 },
      ],
      want: ['compute', 'compute*m', 'compute*m^2', 'ring', 'ring*r', 'ring*r^2'],
    },
    {
      name: 'multi-server samples alone: the sync cost goes on the network (ring left out)',
      rows: [
        { workers: 4, servers: 2 },
        { workers: 8, servers: 4 },
      ],
      want: ['compute', 'compute*m', 'compute*m^2', 'network', 'network*r', 'network*r^2'],
    },
    {
      name: 'two workers on one server support the ring constant, not its retrogression',
      rows: [
        { workers: 2, servers: 1 },
        { workers: 8, servers: 2 },
      ],
      want: ['compute', 'compute*m', 'compute*m^2', 'ring', 'network', 'network*r', 'network*r^2'],
    },
  ])('$name', ({ rows, want }) => {
    expect(active(rows)).toEqual(want);
  });
});

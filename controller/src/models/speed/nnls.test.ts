import { fcnnlsVector } from 'ml-fcnnls';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../random';
import { addRow, emptyEquations, nnlsNormal } from './nnls';

function randomProblem(seed: number, n: number, d: number): { x: number[][]; y: number[] } {
  const random = seededRandom(seed);
  const x = Array.from({ length: n }, () => Array.from({ length: d }, () => random() * 2 - 0.5));
  const y = Array.from({ length: n }, () => random() * 2 - 0.5);
  return { x, y };
}

function objective(x: number[][], y: number[], theta: ArrayLike<number>): number {
  return x.reduce(
    (s, row, i) => s + (row.reduce((u, v, j) => u + v * (theta[j] as number), 0) - y[i]!) ** 2,
    0,
  );
}

function equationsOf(x: number[][], y: number[]) {
  const eq = emptyEquations(x[0]!.length);
  x.forEach((row, i) => addRow(eq, row, y[i]!));
  return eq;
}

describe('nnlsNormal', () => {
  it.each([
    { name: 'tall 12×3', seed: 1, n: 12, d: 3 },
    { name: 'square 5×5', seed: 2, n: 5, d: 5 },
    { name: 'tall 30×6', seed: 3, n: 30, d: 6 },
    { name: 'many active constraints', seed: 4, n: 8, d: 6 },
  ])('matches ml-fcnnls: $name', ({ seed, n, d }) => {
    for (let k = 0; k < 20; k++) {
      const { x, y } = randomProblem(seed * 100 + k, n, d);
      const ours = nnlsNormal(equationsOf(x, y));
      const reference = fcnnlsVector(x, y)
        .K.to1DArray()
        .map((v) => Math.max(0, v));
      expect(Math.min(...ours)).toBeGreaterThanOrEqual(0);
      expect(objective(x, y, ours)).toBeLessThanOrEqual(objective(x, y, reference) + 1e-9);
    }
  });

  it('recovers exact non-negative coefficients', () => {
    const x = [
      [1, 0, 2],
      [0, 1, 1],
      [1, 1, 0],
      [2, 1, 1],
    ];
    const truth = [0.5, 0, 1.5];
    const y = x.map((row) => row.reduce((s, v, j) => s + v * truth[j]!, 0));
    const theta = nnlsNormal(equationsOf(x, y));
    truth.forEach((t, i) => expect(theta[i]).toBeCloseTo(t, 9));
  });

  it('gives the same answer with a warm start', () => {
    const { x, y } = randomProblem(7, 15, 5);
    const eq = equationsOf(x, y);
    const cold = nnlsNormal(eq);
    const warm = nnlsNormal(eq, [1, 1, 1, 1, 1]);
    Array.from(cold).forEach((v, i) => expect(warm[i]).toBeCloseTo(v, 9));
  });
});

import { describe, expect, it } from 'vitest';
import { History, ThinningSeries, type PredictionPoint } from './history';

const point = (t: number, stepsDone: number): PredictionPoint => ({
  t,
  stepsDone,
  progress: null,
  totalSteps: null,
  completion: null,
});

describe('ThinningSeries', () => {
  it('never holds more than its bound, keeps the first and the newest point and spans the whole run', () => {
    const s = new ThinningSeries<number>(16);
    for (let i = 0; i < 10_000; i += 1) {
      s.push(i);
      expect(s.values().length).toBeLessThanOrEqual(16);
    }
    const v = s.values();
    expect(v[0]).toBe(0);
    expect(v.at(-1)).toBe(9_999);
    expect([...v].sort((a, b) => a - b)).toEqual(v);
    expect(v.length).toBeGreaterThan(8);
  });
});

describe('History', () => {
  const limits = { predictionPoints: 8, decisions: 3, utilisationPoints: 8 };

  it('records a prediction only when it changed', () => {
    const h = new History(limits);
    expect(h.recordPrediction('a', point(1, 10))).toBe(true);
    expect(h.recordPrediction('a', point(2, 10))).toBe(false);
    expect(h.recordPrediction('a', point(3, 20))).toBe(true);
    expect(h.job('a').predictions.map((p) => p.t)).toEqual([1, 3]);
  });

  it('completion times within a second count as unchanged (they drift with the clock)', () => {
    const h = new History(limits);
    const c = (v: number) => ({ ...point(0, 5), completion: { value: v, lower: v - 10, upper: v + 10 } });
    expect(h.recordPrediction('a', c(100_000))).toBe(true);
    expect(h.recordPrediction('a', { ...c(100_400), t: 1 })).toBe(false);
    expect(h.recordPrediction('a', { ...c(102_000), t: 2 })).toBe(true);
  });

  it('bounds predictions and decisions per job, and forgets a removed job', () => {
    const h = new History(limits);
    for (let i = 0; i < 100; i += 1) {
      h.recordPrediction('a', point(i, i));
      h.recordDecision('a', {
        t: i,
        round: i,
        kind: 'resize',
        from: null,
        to: null,
        preRun: false,
        why: `${i}`,
      });
    }
    expect(h.job('a').predictions.length).toBeLessThanOrEqual(8);
    expect(h.job('a').decisions.map((d) => d.why)).toEqual(['97', '98', '99']);
    h.forget('a');
    expect(h.job('a')).toEqual({ predictions: [], decisions: [] });
    expect(h.jobIds()).toEqual([]);
  });

  it('records utilisation when it changed, bounded', () => {
    const h = new History(limits);
    expect(h.recordUtilisation({ t: 0, used: { cpu: 1 }, capacity: { cpu: 8 } })).toBe(true);
    expect(h.recordUtilisation({ t: 1, used: { cpu: 1, memory: 0 }, capacity: { cpu: 8 } })).toBe(false);
    for (let i = 2; i < 50; i += 1) h.recordUtilisation({ t: i, used: { cpu: i % 8 }, capacity: { cpu: 8 } });
    expect(h.utilisation().length).toBeLessThanOrEqual(8);
  });

  it("records a job's end once, however often the runtime tells it", () => {
    const h = new History();
    const end = { round: null, from: null, to: null, preRun: false, why: 'finished' };
    h.recordDecision('a', { t: 1, kind: 'start', ...end });
    h.recordDecision('a', { t: 2, kind: 'done', ...end });
    h.recordDecision('a', { t: 3, kind: 'done', ...end });
    expect(h.job('a').decisions.map((d) => d.kind)).toEqual(['start', 'done']);
  });
});

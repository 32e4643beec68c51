/**
 * The README's all-reduce speed figure is what `eval speed --data test/data/pollux --seeds 20`
 * measures at 5 and 10 configurations: every number of the row, recomputed here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateAllReduceModels } from './allreduce-eval';
import { parsePolluxPlacements, parsePolluxScalability, type AllReduceData } from './pollux-data';

const ROOT = join(__dirname, '../../../..');
const MODELS = ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3'];

function polluxData(): AllReduceData {
  const read = (model: string, file: string): string =>
    readFileSync(join(ROOT, 'test/data/pollux', model, file), 'utf8');
  return {
    jobs: MODELS.map((model) => ({
      model,
      configurations: parsePolluxPlacements(read(model, 'placements.csv')),
      beyond: parsePolluxScalability(read(model, 'scalability.csv')),
    })),
  };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

describe('the README’s all-reduce speed figure', { timeout: 120_000 }, () => {
  it('is what eval speed measures on Pollux’s placements (seeds 1–20, k = 5 and 10)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| all-reduce speed model, 5 / 10 measured'));
    expect(row).toBeDefined();
    const data = polluxData();
    const [five, ten] = [5, 10].map((samples) => evaluateAllReduceModels(data, { samples, seeds: 20 }));
    const pair = (get: (r: NonNullable<typeof five>) => number): string =>
      `${pct(get(five!))} / ${pct(get(ten!))}`;
    expect(row).toContain(`median error ${pair((r) => r.medianError)} `);
    expect(row).toContain(`same samples: ${pair((r) => r.baseline.medianError)})`);
    expect(row).toContain(`p90 ${pair((r) => r.p90Error)} (${pair((r) => r.baseline.p90Error)})`);
    expect(row).toContain(
      `6–16: ${pair((r) => r.beyond!.medianError)} (${pair((r) => r.beyond!.baseline.medianError)})`,
    );
    // The goal, and where the row says we lose: both true of the run.
    expect(five!.medianError).toBeLessThanOrEqual(five!.baseline.medianError);
    expect(ten!.medianError).toBeLessThanOrEqual(ten!.baseline.medianError);
    const lost = Object.entries(ten!.models)
      .filter(([, m]) => m.medianError > m.baseline.medianError)
      .map(([name, m]) => `${name} ${pct(m.medianError)} vs ${pct(m.baseline.medianError)}`);
    expect(lost).toEqual(['cifar10 6.6% vs 6.0%', 'deepspeech2 6.6% vs 6.2%']);
    expect(row).toContain('(k = 10: 6.6% vs 6.0%, 6.6% vs 6.2%)');
  });
});

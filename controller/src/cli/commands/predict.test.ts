import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eq1Curve, observe, seededRandom } from '../../models/convergence/synthetic';
import { convergenceDocument } from './predict';

describe('predict convergence', () => {
  it('prints exactly one JSON document with the contract’s fields (spawned CLI)', () => {
    const rule = { stepsPerEpoch: 100, threshold: 0.01, patience: 3 };
    const curve = eq1Curve({ b0: 0.21, b1: 1.07, b2: 0.07 }, 100);
    const scenario = {
      name: 'cli',
      paperForm: true,
      curve: (k: number) => 2.3 * curve(k),
      rule,
      pointsPerEpoch: 10,
      noise: { relative: 0.03, autocorrelation: 0.3, outlierRate: 0 },
    };
    const rows = observe(scenario, 1000, seededRandom(4)).map((p) => `${p.step},${p.loss}`);
    const dir = mkdtempSync(join(tmpdir(), 'optimus-predict-'));
    const input = join(dir, 'loss.csv');
    writeFileSync(input, ['step,loss', ...rows, 'garbage,row'].join('\n'));
    const args = ['tsx', 'controller/src/cli/main.ts', 'predict', 'convergence', '--input', input];
    const flags = ['--steps-per-epoch', '100', '--threshold', '0.01', '--patience', '3', '--json'];
    const stdout = execFileSync('npx', [...args, ...flags], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const doc = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(doc).slice(0, 5)).toEqual([
      'predictedTotalSteps',
      'lower',
      'upper',
      'remainingSteps',
      'beta',
    ]);
    const total = doc.predictedTotalSteps as number;
    expect(Math.abs(total - 2100) / 2100).toBeLessThanOrEqual(0.15);
    expect(doc.remainingSteps).toBe(total - 996);
    expect(doc.beta).toHaveLength(3);
  });

  it('fails (exit 1, one line, nothing on stdout) on a CSV with too few points', () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-predict-'));
    const input = join(dir, 'short.csv');
    writeFileSync(input, ['step,loss', '0,2.3', '10,2.1', '20,1.9'].join('\n'));
    const r = spawnSync(
      'npx',
      ['tsx', 'controller/src/cli/main.ts', 'predict', 'convergence', '--input', input].concat([
        '--steps-per-epoch',
        '10',
        '--threshold',
        '0.01',
        '--patience',
        '3',
        '--json',
      ]),
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      `optimus: --input: "${input}" has 3 valid step,loss rows; at least 8 are needed`,
    );
  });

  it('documents insufficient data with a status and a reason', () => {
    expect(convergenceDocument({ status: 'insufficient-data', reason: 'few points' })).toEqual({
      status: 'insufficient-data',
      reason: 'few points',
    });
  });
});

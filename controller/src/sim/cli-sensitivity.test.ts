/** `simulate --sensitivity`, `--speed-noise` and `--declared-epochs` through the real command. */
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerSimulateCommands } from '../cli/commands/simulate';
import type { SensitivityReport } from './sensitivity';

async function cli(args: string[]): Promise<string> {
  const program = new Command('optimus').exitOverride();
  registerSimulateCommands(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    spy.mockRestore();
  }
  return out;
}

afterEach(() => vi.restoreAllMocks());

const small = [
  'simulate',
  '--workload',
  'poisson',
  '--jobs',
  '5',
  '--policies',
  'optimus,drf',
  '--workers',
  '1',
];

describe('simulate --sensitivity', () => {
  it('reports every ratio at restart pauses of 0, 30 and 120 s and speed noise of 5% and 20%, beside the default', async () => {
    const doc = JSON.parse(await cli([...small, '--sensitivity', '--json'])) as {
      ratios: Record<string, { jct: number }>;
      policies: Record<string, { avgJct: number }>;
      sensitivity: SensitivityReport;
    };
    const rows = doc.sensitivity.rows;
    expect(rows.map((r) => [r.varies, r.restartPauseSec, r.speedNoise])).toEqual([
      ['default', 30, 0.05],
      ['restartPauseSec', 0, 0.05],
      ['restartPauseSec', 30, 0.05],
      ['restartPauseSec', 120, 0.05],
      ['speedNoise', 30, 0.05],
      ['speedNoise', 30, 0.2],
    ]);
    // The default column is the run itself; settings equal to it are not run again.
    expect(rows[0]!.jct.drf).toBe(doc.ratios.drf!.jct);
    expect(rows[2]).toMatchObject({ jct: rows[0]!.jct, avgJct: rows[0]!.avgJct });
    expect(rows[0]!.avgJct.optimus).toBe(doc.policies.optimus!.avgJct);
    // A longer pause costs every policy that resizes.
    expect(rows[3]!.avgJct.optimus).toBeGreaterThan(rows[1]!.avgJct.optimus!);
    for (const r of rows) expect(r.jct.optimus).toBe(1);
  });

  it('--speed-noise changes what the online models see', async () => {
    const at = async (noise: string) =>
      (
        JSON.parse(await cli([...small, '--speed-noise', noise, '--json'])) as {
          policies: Record<string, { avgJct: number }>;
        }
      ).policies.optimus!.avgJct;
    expect(await at('0.3')).not.toBe(await at('0.05'));
  });

  it.each([
    [['--oracle', '--declared-epochs'], 'exclude each other'],
    [['--ablation', '--sensitivity'], 'exclude each other'],
    [['--speed-noise', '0.9'], '--speed-noise'],
  ])('refuses %j', async (extra, message) => {
    await expect(cli([...small, ...extra, '--json'])).rejects.toThrow(message);
  });

  it('--declared-epochs is reported as such', async () => {
    const doc = JSON.parse(await cli([...small, '--declared-epochs', '--json'])) as { estimation: string };
    expect(doc.estimation).toBe('declared-epochs');
  });
});

/**
 * The command contracts through the real command definitions (in-process, only this module's commands
 * registered): trace export → simulate --json, and flag errors.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerSimulateCommands } from '../cli/commands/simulate';
import { registerTraceCommands } from '../cli/commands/trace';
import { parseTrace } from './trace';

async function cli(args: string[]): Promise<string> {
  const program = new Command('optimus').exitOverride();
  registerSimulateCommands(program);
  registerTraceCommands(program);
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

describe('optimus trace export / simulate', () => {
  it('exports a trace and simulates it with exactly one JSON document on stdout', async () => {
    const exported = await cli(['trace', 'export', '--workload', 'poisson', '--seed', '3', '--jobs', '6']);
    const trace = parseTrace(JSON.parse(exported));
    expect(trace.jobs).toHaveLength(6);
    const file = join(mkdtempSync(join(tmpdir(), 'optimus-sim-')), 'trace.json');
    writeFileSync(file, exported);
    const stdout = await cli([
      'simulate',
      '--workload',
      file,
      '--policies',
      'optimus,drf',
      '--seeds',
      '1',
      '--json',
    ]);
    const doc = JSON.parse(stdout) as Record<string, unknown> & {
      policies: Record<string, Record<string, number>>;
      ratios: Record<string, { jct: number; makespan: number }>;
    };
    expect(doc).toMatchObject({ workload: file, seeds: 1, estimation: 'online' });
    for (const name of ['optimus', 'drf']) {
      expect(Object.keys(doc.policies[name]!).sort()).toEqual([
        'avgJct',
        'makespan',
        'p95Jct',
        'restarts',
        'utilization',
      ]);
    }
    expect(doc.ratios.optimus).toEqual({ jct: 1, makespan: 1 });
    expect(doc.ratios.drf!.jct).toBeCloseTo(doc.policies.drf!.avgJct! / doc.policies.optimus!.avgJct!, 2);
  });

  it.each([
    [['simulate', '--workload', 'nope', '--json'], '--workload'],
    [['simulate', '--policies', 'optimus,magic', '--json'], '--policies'],
    [['trace', 'export', '--workload', 'nope'], '--workload'],
  ])('refuses %j with an error naming the flag', async (args, flag) => {
    await expect(cli(args)).rejects.toThrow(flag);
  });
});

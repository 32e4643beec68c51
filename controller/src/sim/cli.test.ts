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
import { loadMeasuredPause } from './load';
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
        'gpuUtilization',
        'lateStarts',
        'makespan',
        'maxStartWait',
        'p95Jct',
        'restarts',
        'utilization',
      ]);
    }
    expect(doc.ratios.optimus).toEqual({ jct: 1, makespan: 1 });
    expect(doc.ratios.drf!.jct).toBeCloseTo(doc.policies.drf!.avgJct! / doc.policies.optimus!.avgJct!, 2);
  });

  it('imports a DL2 dump and replays it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-dl2-'));
    const dump = join(dir, 'dump.json');
    const job = (id: number, model: string, slot: number, gpu: number) => ({
      id,
      arrivalSlot: slot,
      model,
      numEpochs: 60,
      epochSize: 115,
      psDemand: [2, 0],
      workerDemand: [2, gpu],
    });
    writeFileSync(
      dump,
      JSON.stringify({
        format: 'dl2-jobs',
        version: 1,
        config: 'test',
        seed: 1,
        slotSec: 1200,
        nodes: 4,
        slotsPerNode: 8,
        slotsPerGpu: 4,
        maxTasks: 16,
        jobs: [job(1, 'resnet-50', 0, 4), job(2, 'dssm', 1, 0)],
      }),
    );
    const trace = parseTrace(JSON.parse(await cli(['trace', 'import', '--from', 'dl2', dump])));
    expect(trace.jobs.map((j) => [j.id, j.arrival])).toEqual([
      ['dl2/job-0001', 0],
      ['dl2/job-0002', 1200],
    ]);
    const file = join(dir, 'trace.json');
    writeFileSync(file, JSON.stringify(trace));
    const doc = JSON.parse(
      await cli([
        'simulate',
        '--workload',
        file,
        '--interval',
        '1200',
        '--oracle',
        '--policies',
        'optimus,drf',
        '--json',
      ]),
    ) as { policies: Record<string, { avgJct: number }> };
    expect(doc.policies.optimus!.avgJct).toBeGreaterThan(0);
  });

  it('exports a trace whose every job carries ResNet-50’s blocks, which PAA then speeds up', async () => {
    const args = ['trace', 'export', '--workload', 'poisson', '--seed', '4', '--jobs', '6'];
    const plain = parseTrace(JSON.parse(await cli(args)));
    const blocked = parseTrace(JSON.parse(await cli([...args, '--parameter-blocks', 'resnet-50'])));
    expect(blocked.jobs.map((j) => j.parameterBlocks?.length)).toEqual(plain.jobs.map(() => 157));
    // Nothing else changes.
    expect(blocked.jobs.map(({ parameterBlocks: _, ...rest }) => rest)).toEqual(plain.jobs);
    const file = join(mkdtempSync(join(tmpdir(), 'optimus-sim-')), 'blocks.json');
    writeFileSync(file, JSON.stringify(blocked));
    const run = async (rule: string) =>
      (
        JSON.parse(
          await cli([
            'simulate',
            '--workload',
            file,
            '--policies',
            'optimus',
            '--policy-option',
            `parameterAssignment=${rule}`,
            '--json',
          ]),
        ) as { policies: { optimus: { avgJct: number } } }
      ).policies.optimus.avgJct;
    expect(await run('paa')).toBeLessThan(await run('mxnet-default'));
  });

  it('reports the range of the per-seed JCT ratios, which holds the pooled ratio', async () => {
    const doc = JSON.parse(
      await cli([
        'simulate',
        '--workload',
        'poisson',
        '--jobs',
        '6',
        '--policies',
        'optimus,drf',
        '--seeds',
        '3',
        '--json',
      ]),
    ) as {
      ratios: Record<string, { jct: number }>;
      jctRatioRange: Record<string, { min: number; max: number }>;
    };
    expect(doc.jctRatioRange.optimus).toEqual({ min: 1, max: 1 });
    const range = doc.jctRatioRange.drf!;
    // The pooled ratio (mean ÷ mean) is a weighted mean of the per-seed ratios, so it lies between them.
    expect(range.min).toBeLessThanOrEqual(doc.ratios.drf!.jct + 1e-3);
    expect(range.max).toBeGreaterThanOrEqual(doc.ratios.drf!.jct - 1e-3);
    expect(range.max).toBeGreaterThan(range.min); // three different seeds
  });

  it('passes --policy-option to the policies and reports the makespan and JCT bounds', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'optimus-sim-')), 'trace.json');
    writeFileSync(
      file,
      await cli(['trace', 'export', '--workload', 'poisson', '--seed', '2', '--jobs', '5']),
    );
    const run = async (extra: string[]) =>
      JSON.parse(
        await cli([
          'simulate',
          '--workload',
          file,
          '--policies',
          'optimus,optimus-paper',
          '--json',
          ...extra,
        ]),
      ) as {
        policyOptions: string[];
        makespanBound: number;
        jctBound: number;
        policies: Record<string, { makespan: number; avgJct: number }>;
        failed: Record<string, string>;
      };
    const plain = await run([]);
    const paperLike = await run([
      '--policy-option',
      'gain=seconds',
      '--policy-option',
      'lookAhead=false',
      '--policy-option',
      'resizeCost=false',
    ]);
    expect(paperLike.policyOptions).toEqual(['gain=seconds', 'lookAhead=false', 'resizeCost=false']);
    expect(plain.failed).toEqual({});
    for (const doc of [plain, paperLike]) {
      expect(doc.makespanBound).toBeGreaterThan(0);
      expect(doc.jctBound).toBeGreaterThan(0);
      for (const f of Object.values(doc.policies)) {
        expect(f.makespan).toBeGreaterThanOrEqual(doc.makespanBound);
        expect(f.avgJct).toBeGreaterThanOrEqual(doc.jctBound);
      }
    }
    // The options reach the policies: optimus built with the paper's allocator options behaves differently.
    expect(paperLike.policies.optimus).not.toEqual(plain.policies.optimus);
  });

  it('takes the restart pause measured on the real trainers (--restart-pause measured:<kind>)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'optimus-sim-')), 'trace.json');
    writeFileSync(
      file,
      await cli(['trace', 'export', '--workload', 'poisson', '--seed', '2', '--jobs', '5']),
    );
    const run = async (pause: string) =>
      JSON.parse(
        await cli([
          'simulate',
          '--workload',
          file,
          '--policies',
          'optimus',
          '--restart-pause',
          pause,
          '--json',
        ]),
      ) as { policies: Record<string, unknown> };
    const seconds = loadMeasuredPause('measured:allreduce');
    const measured = await run('measured:allreduce');
    expect(measured).toEqual(await run(String(seconds)));
    expect(measured).not.toEqual(await run('120')); // the pause matters on this trace
  });

  it.each([
    [['simulate', '--restart-pause', 'measured:tf2', '--json'], 'no tf2 resize measured'],
    [['simulate', '--restart-pause', 'soon', '--json'], '--restart-pause'],
    [['simulate', '--policy-option', 'magic=1', '--json'], 'unknown policy option "magic"'],
    [['trace', 'import', '--from', 'sparrow', 'x.json'], '--from'],
    [['trace', 'import', '--from', 'dl2', '/nonexistent.json'], 'cannot read'],
    [['simulate', '--workload', 'nope', '--json'], '--workload'],
    [['simulate', '--policies', 'optimus,magic', '--json'], '--policies'],
    [['trace', 'export', '--workload', 'nope'], '--workload'],
    [['trace', 'export', '--workload', 'paper', '--parameter-blocks', 'vgg-16'], '--parameter-blocks'],
    [['trace', 'export', '--workload', 'paper', '--parameter-blocks', 'constructor'], '--parameter-blocks'],
  ])('refuses %j with an error naming the flag', async (args, flag) => {
    await expect(cli(args)).rejects.toThrow(flag);
  });
});

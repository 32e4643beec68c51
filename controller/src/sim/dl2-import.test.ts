import { describe, expect, it } from 'vitest';
import { importDl2, parseDl2Dump, type Dl2Dump } from './dl2-import';
import { loadMeasured } from './load';
import type { MeasuredModel } from './measured-table';
import { resolveWork } from './loss-curve';
import { resolveSpeed } from './speed-truth';
import { parseTrace } from './trace';

const dump = (jobs: Dl2Dump['jobs']): Dl2Dump => ({
  format: 'dl2-jobs',
  version: 1,
  config: 'small',
  seed: 3,
  slotSec: 1200,
  nodes: 12,
  slotsPerNode: 8,
  slotsPerGpu: 4,
  maxTasks: 16,
  jobs,
});

const resnet = {
  id: 7,
  arrivalSlot: 2,
  model: 'resnet-50',
  numEpochs: 9000,
  epochSize: 115,
  psDemand: [2, 0] as [number, number],
  workerDemand: [2, 4] as [number, number],
};

describe('DL2 import', () => {
  const measured = loadMeasured();

  it('maps slots, nodes and demands; the result is a valid trace', () => {
    const t = importDl2(dump([resnet, { ...resnet, id: 3, model: 'dssm', workerDemand: [2, 0] }]), {
      measured,
    });
    expect(parseTrace(JSON.parse(JSON.stringify(t)))).toEqual(t);
    expect(t.cluster.servers).toHaveLength(12);
    expect(t.cluster.servers[0]).toEqual({ name: 'node-01', capacity: { cpu: 8, 'nvidia.com/gpu': 2 } });
    expect(t.jobs.map((j) => j.id)).toEqual(['dl2/job-0003', 'dl2/job-0007']);
    const r = t.jobs[1]!;
    expect(r).toMatchObject({
      arrival: 2400,
      type: 'resnet-50',
      mode: 'sync',
      psDemand: { cpu: 2 },
      workerDemand: { cpu: 2, 'nvidia.com/gpu': 1 },
      maxPs: 16,
      maxWorkers: 12, // the measured table's largest worker count
      globalBatch: 32,
    });
    expect(t.jobs[0]!.workerDemand).toEqual({ cpu: 2 });
  });

  it('runs exactly as long as DL2 says at a shape: epochs · epochSize samples at the measured samples/s', () => {
    const t = importDl2(dump([resnet]), { measured });
    const job = t.jobs[0]!;
    const steps = resolveWork(job.work, job.stepsPerEpoch).totalSteps;
    const stepsPerSec = resolveSpeed(job, measured).speed(1, 1);
    // resnet-50 at 1 PS + 1 worker: 15.783 samples/s measured (config_speed.txt).
    const dl2Seconds = (9000 * 115) / 15.783;
    expect(steps / stepsPerSec).toBeCloseTo(dl2Seconds, -1);
  });

  it.each([
    { speeds: 'table', maxWorkers: 12, at16: (m: MeasuredModel) => m.syncSpeed(16, 12) },
    { speeds: 'table+rbf', maxWorkers: 16, at16: (m: MeasuredModel) => m.extrapolatedSpeed(16, 16) },
    { speeds: 'rbf', maxWorkers: 16, at16: (m: MeasuredModel) => m.rbfSpeed(16, 16) },
  ] as const)('--speeds $speeds: DL2’s cap unless clamped, and the speed truth it names', (c) => {
    const t = importDl2(dump([resnet]), { measured, speeds: c.speeds });
    const job = parseTrace(JSON.parse(JSON.stringify(t))).jobs[0]!;
    expect(job.maxWorkers).toBe(c.maxWorkers);
    expect(resolveSpeed(job, measured).speed(16, 16)).toBeCloseTo(c.at16(measured.get('resnet-50')!), 9);
  });

  it.each([
    [{ ...dump([resnet]), format: 'x' }, 'format'],
    [dump([{ ...resnet, numEpochs: 0 }]), 'jobs.0.numEpochs'],
    [{ ...dump([resnet]), extra: 1 }, 'Unrecognized key'],
  ])('refuses an invalid dump with the path (%#)', (value, path) => {
    expect(() => parseDl2Dump(value)).toThrow(path);
  });

  it('refuses a model the measured table does not have', () => {
    expect(() => importDl2(dump([{ ...resnet, model: 'gpt' }]), { measured })).toThrow(
      'no measurements for model "gpt"',
    );
  });
});

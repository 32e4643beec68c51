import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobViewSchema, type ClusterViewJson, type JobView } from '../../runtime/api-schemas';
import { startTestController, type TestController } from '../testing/controller-server';
import { explainWait } from './why';

let t: TestController;
let views: JobView[];
beforeAll(async () => {
  t = await startTestController();
  views = t.controller.list().map((v) => jobViewSchema.parse(v));
});
afterAll(async () => {
  await t.close();
});

const GiB = 1024 ** 3;
const server = (name: string, cpu: number, usedCpu: number): ClusterViewJson['servers'][number] => ({
  name,
  capacity: { cpu, memory: 16 * GiB },
  reserved: {},
  used: { cpu: usedCpu },
  tasks: [],
});
const cluster = (...servers: ClusterViewJson['servers']): ClusterViewJson => ({
  resources: ['cpu', 'memory'],
  servers,
  capacity: {},
  used: {},
  reserved: {},
  utilisation: [],
  elapsedSec: null,
});
const NOW = 1_000;

describe('explainWait (default/big needs cpu 4 for 1 PS + 1 worker; default/small holds 2 of node-a’s 4)', () => {
  it('short of CPU now: starts when small is predicted to finish', () => {
    const a = explainWait(views, 'default/big', cluster(server('node-a', 4, 2)), NOW);
    const smallEnd = views.find((v) => v.id === 'default/small')!.plan.predictedCompletionTs!.value;
    expect(a.short).toEqual([{ resource: 'cpu', need: 4, free: 2 }]);
    expect(a.predictedStart).toEqual({ atMs: smallEnd, afterJobs: ['default/small'] });
  });

  it('room now: it starts at the next round', () => {
    const a = explainWait(views, 'default/big', cluster(server('node-a', 8, 2)), NOW);
    expect(a.short).toEqual([]);
    expect(a.predictedStart).toEqual({ atMs: NOW, afterJobs: [] });
  });

  it('enough in total but on no one server: names the role that does not fit', () => {
    const a = explainWait(views, 'default/big', cluster(server('a', 4, 2), server('b', 2, 0)), NOW);
    expect(a.short).toEqual([]);
    expect(a.noServerFits).toEqual([{ role: 'worker', demand: { cpu: 3, memory: 4 * GiB } }]);
  });

  it('no predicted completion for the jobs that hold resources: no estimate, and why', () => {
    const unpredicted = views.map((v) => ({ ...v, plan: { ...v.plan, predictedCompletionTs: null } }));
    const a = explainWait(unpredicted, 'default/big', cluster(server('node-a', 4, 2)), NOW);
    expect(a.predictedStart).toBeNull();
    expect(a.predictedStartNote).toBe(
      '1 of the jobs holding resources has no predicted completion yet (models not fitted)',
    );
  });

  it('never fits while others reserve what it needs', () => {
    const reserved = cluster({ ...server('node-a', 4, 2), reserved: { cpu: 2 } });
    const a = explainWait(views, 'default/big', reserved, NOW);
    expect(a.predictedStart).toBeNull();
    expect(a.predictedStartNote).toBe(
      'it does not fit even once every running job has finished as predicted',
    );
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import {
  CONTRACT_SERVERS,
  describeExecutorContract,
  type ExecutorHarness,
} from '../../../test/contracts/executor-contract';
import { jobSpecSchema } from '../runtime/job-spec';
import { LocalBackend } from './backend';
import { PidRegistry } from './processes';
import { buildTrainer } from './trainer-bundle';

let root = '';
let trainer = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'optimus-local-'));
  trainer = await buildTrainer(join(root, 'bin'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
async function makeHarness(): Promise<ExecutorHarness> {
  n += 1;
  const backend = new LocalBackend({
    servers: CONTRACT_SERVERS,
    root: join(root, `h${n}`),
    trainerScript: trainer,
    sidecar: null,
    timeScale: 1,
    restartCostSec: 0,
    pids: new PidRegistry(join(root, `pids-${n}.json`)),
    marker: `contract-${n}`,
  });
  return {
    executor: backend.executor,
    async submit(job) {
      const [namespace, name] = job.id.split('/');
      await backend.admit(
        jobSpecSchema.parse({
          namespace,
          name,
          mode: job.mode,
          batchSize: 64,
          stepsPerEpoch: 100,
          psDemand: job.psDemand,
          workerDemand: job.workerDemand,
        }),
      );
    },
    settle: () => new Promise((r) => setTimeout(r, 20)),
    running: async (id) => backend.running().get(id) ?? null,
    restarts: async (id) => backend.restarts(id),
    close: () => backend.close(),
  };
}

describeExecutorContract('local', makeHarness);

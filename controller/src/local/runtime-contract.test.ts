import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { CONTRACT_SERVERS } from '../../../test/contracts/executor-contract';
import { describeRuntimeContract, type Fault } from '../../../test/contracts/runtime-contract';
import { LocalBackend } from './backend';
import { PidRegistry } from './processes';
import { buildTrainer } from './trainer-bundle';

let root = '';
let trainer = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'optimus-local-runtime-'));
  trainer = await buildTrainer(join(root, 'bin'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
describeRuntimeContract('local', async () => {
  n += 1;
  const faults = new Map<string, Fault>();
  const backend = new LocalBackend({
    servers: CONTRACT_SERVERS,
    root: join(root, `h${n}`),
    trainerScript: trainer,
    sidecar: null,
    timeScale: 1,
    restartCostSec: 0,
    pids: new PidRegistry(join(root, `pids-${n}.json`)),
    marker: `runtime-contract-${n}`,
    // The emulated trainer crashes before it runs, or runs without ever saying so.
    faultOf: (id) => {
      const f = faults.get(id);
      return f === 'fail' ? 'crash' : f === 'hang' ? 'hang' : null;
    },
  });
  return {
    backend,
    inject: (id, fault) => (fault ? faults.set(id, fault) : faults.delete(id)),
    settle: () => new Promise((r) => setTimeout(r, 50)),
    close: () => backend.close(),
  };
});

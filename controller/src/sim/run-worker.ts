/**
 * A worker thread of `run-pool.ts`: receives runs as data, simulates each with the project's
 * models and the registered policies, and sends back the result (or the failure).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getPolicy } from '../scheduling/registry';
import { simulate } from './engine';
import { loadMeasured } from './load';
import { productionModels } from './models';
import { simulationOf, type RunTask, type WorkerMessage } from './run-pool';

const { measuredPath } = workerData as { measuredPath?: string };
const measured = loadMeasured(measuredPath);
const port = parentPort;

port?.on('message', (task: RunTask) => {
  const send = (m: WorkerMessage): void => port.postMessage(m);
  simulate(
    simulationOf(task, {
      measured,
      policy: getPolicy(task.policy, task.options),
      models: productionModels,
      onProgress: (fraction) => send({ type: 'progress', id: task.id, fraction }),
    }),
  ).then(
    (result) => send({ type: 'done', id: task.id, result }),
    (err: unknown) =>
      send({ type: 'failed', id: task.id, error: err instanceof Error ? err.message : String(err) }),
  );
});

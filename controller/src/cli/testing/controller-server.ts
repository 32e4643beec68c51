/**
 * A real controller (the shipped runtime with the real Optimus policy, over the fake backend) behind
 * the real HTTP app on an ephemeral port, with one job running and one waiting for CPU: what the
 * client commands are tested against.
 */
import { History } from '../../dashboard/history';
import { bindSource } from '../../dashboard/bind-source';
import { createApp } from '../../http/app';
import { listen, type RunningServer } from '../../http/serve';
import { defaultCore } from '../../runtime/default-core';
import { jobSpecSchema } from '../../runtime/job-spec';
import { buildController, FakeBackend } from '../../runtime/testing';

export interface TestController {
  readonly server: RunningServer;
  readonly controller: ReturnType<typeof buildController>['controller'];
  readonly backend: FakeBackend;
  close(): Promise<void>;
}

/** `default/small` runs on node-a (4 cores); `default/big` needs 4 cores at its minimum and waits. */
export async function startTestController(o: { token?: string } = {}): Promise<TestController> {
  const backend = new FakeBackend();
  backend.servers = [{ name: 'node-a', capacity: { cpu: 4, memory: 16 * 1024 ** 3 }, reserved: {} }];
  const built = buildController({
    backend,
    core: defaultCore('optimus'),
    options: { preRun: { budget: 0, maxPs: 1, maxWorkers: 1, recordsPerWorker: 1 } },
  });
  const { controller } = built;
  await controller.start();
  const job = (name: string, workerCpu: number) =>
    jobSpecSchema.parse({
      name,
      batchSize: 64,
      stepsPerEpoch: 100,
      psDemand: { cpu: 1, memory: 2 * 1024 ** 3 },
      workerDemand: { cpu: workerCpu, memory: 4 * 1024 ** 3 },
    });
  await controller.submit(job('small', 1));
  await controller.roundNow('full');
  await controller.submit(job('big', 3));
  await controller.roundNow('full');
  const app = createApp({
    runtime: controller,
    token: o.token,
    dashboard: { source: bindSource(controller, async () => backend.servers), history: new History() },
  });
  const server = await listen(app, 0);
  return {
    server,
    controller,
    backend,
    close: async () => {
      await server.close();
      await controller.stop();
    },
  };
}

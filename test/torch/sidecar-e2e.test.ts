/**
 * The reference trainers' log through the real sidecar bundle, end to end: a DDP job resized 2 → 3
 * ranks through SIGTERM, worker 0 of each generation writing its log file (`--log-file`, the done
 * marker at exit) and a sidecar of its own (a new pod: new state, the same task) tailing it to a
 * broker. What a subscriber standing in for the controller receives is judged: every step once, in
 * order, across the resize; the one checkpoint of the stop; the loss as the trainer printed it and
 * continuous across the resize. Skipped where torch is missing.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricsRecord } from '../../shared/src/schemas';
import { buildSidecar } from '../../sidecar/build.mjs';
import { aedesBroker, type TestBroker } from '../../sidecar/test/helpers/broker';
import { spawnSidecar, type Running } from '../../sidecar/test/helpers/spawn';
import { distinct, subscribe, type Collected } from '../../sidecar/test/helpers/subscriber';
import { lossJump, oneTo } from './checks';
import { allreduce, Generation, killAll, torchAvailability, type Shape } from './harness';

const TORCH = torchAvailability();
const B = 60; // the job's global batch: 30 per rank at 2, 20 at 3
const SPE = 20;
const END = 40;
const ARGS = ['--log-every', '1', '--steps-per-epoch', String(SPE), '--checkpoint-every', '0'];
const JOB = `torch-e2e-${process.pid}`;

const root = mkdtempSync(join(tmpdir(), 'optimus-torch-sidecar-'));
let broker: TestBroker | null = null;
let sub: Collected | null = null;
const sidecars: Running[] = [];

const globalStep = (r: Pick<MetricsRecord, 'metrics'>): number => r.metrics['global_step'] ?? Number.NaN;

/** One generation whose worker 0 logs to `<root>/<name>/train.log`, tailed by its own sidecar. */
async function generation(name: string, shape: Shape, args: readonly string[]) {
  const dir = join(root, name);
  mkdirSync(dir);
  const log = join(dir, 'train.log');
  const gen = await Generation.start({
    shape,
    batchSize: B,
    checkpointDir: join(root, 'checkpoint'),
    args: [...ARGS, ...args],
    perTask: (role, index) =>
      role === 'worker' && index === 0
        ? { args: ['--log-file', log], env: { OPTIMUS_DONE_FILE: `${log}.done` } }
        : {},
  });
  const sidecar = spawnSidecar(
    { log, broker: broker!.sidecarUrl, format: 'jsonl', 'batch-size': String(B / shape.workers) },
    { OPTIMUS_JOB: JOB, OPTIMUS_MQTT_VERSION: String(broker!.version) },
  );
  sidecars.push(sidecar);
  return { gen, sidecar };
}

describe.skipIf(!TORCH.ok)(
  `the trainers' log through the real sidecar${TORCH.ok ? '' : ` (skipped: ${TORCH.reason})`}`,
  () => {
    beforeAll(async () => {
      await buildSidecar();
      broker = await aedesBroker();
      sub = await subscribe(broker.url, `optimus/v1/ml/${JOB}/#`, broker.version);
    }, 120_000);

    afterAll(async () => {
      for (const s of sidecars) s.child.kill('SIGKILL');
      await killAll();
      await sub?.close();
      await broker?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('a DDP job resized 2 → 3 ranks: every step once across the resize, its checkpoint, the loss as printed and continuous', async () => {
      mkdirSync(join(root, 'checkpoint'));
      const first = await generation('gen-1', allreduce(2), []);
      await first.gen.untilStep(15);
      await first.gen.stop(); // every rank at once, as Kubernetes deletes a job's pods
      expect(await first.gen.exitCodes(), first.gen.stderr()).toEqual([0, 0]);
      expect(await first.sidecar.exited, first.sidecar.stderr()).toBe(0); // drained to the done marker

      const second = await generation('gen-2', allreduce(3), ['--max-steps', String(END)]);
      expect(await second.gen.exitCodes(), second.gen.stderr()).toEqual([0, 0, 0]);
      expect(await second.sidecar.exited, second.sidecar.stderr()).toBe(0);

      const received = distinct(sub!.records);
      expect(sub!.invalid).toBe(0);
      expect(sub!.statuses).toEqual(['online', 'done', 'online', 'done']);
      const steps = received.filter((r) => r.kind === 'batch');
      // Every step once and in order, across the resize (seqs increase across the two pods' sidecars).
      expect(steps.map(globalStep)).toEqual(oneTo(END));
      expect(steps.every((r) => r.framework === 'jsonl')).toBe(true);
      // The controller's step: epoch × stepsPerEpoch + batch + 1.
      expect(steps.map((r) => r.epoch! * SPE + r.batch! + 1)).toEqual(oneTo(END));
      // The global batch is the job's at both shapes, split over the ranks of each.
      const stoppedAt = globalStep(
        first.gen.worker0
          .records()
          .filter((r) => r.kind === 'batch')
          .at(-1)!,
      );
      for (const r of steps) {
        const workers = globalStep(r) <= stoppedAt ? 2 : 3;
        expect(r.metrics).toMatchObject({ global_batch: B, workers, batch_size: B / workers });
      }
      // The stop's checkpoint, of the last step the first generation logged.
      const checkpoints = received.filter((r) => r.kind === 'checkpoint');
      expect(checkpoints.map(globalStep)).toEqual([stoppedAt, END]); // the stop, and the final one
      // The loss on the wire is the trainer's own, record for record.
      const printed = [first, second].flatMap(({ gen }) =>
        gen.worker0
          .json()
          .filter((l) => l.value['kind'] === 'batch')
          .map((l) => l.value['loss']),
      );
      expect(steps.map((r) => r.loss)).toEqual(printed);
      // ... and it continues across the resize: no jump back beyond the noise.
      const before = steps.filter((r) => globalStep(r) <= stoppedAt);
      const after = steps.filter((r) => globalStep(r) > stoppedAt);
      const j = lossJump(before, after);
      expect(j.jump, JSON.stringify(j)).toBeLessThan(3 * j.noise + 0.05);
    }, 300_000);
  },
);

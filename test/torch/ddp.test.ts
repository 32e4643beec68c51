/**
 * The all-reduce reference trainer (charts/optimus/examples/pytorch/ddp_train.py) with Debian's real
 * torch: ranks as real processes on env:// variables, resized through SIGTERM → checkpoint →
 * restart at another world size, judged from the log lines as the sidecar parses them.
 * Skipped, saying why, where `/usr/bin/python3 -c 'import torch'` fails.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { effectiveGlobalBatch, perWorkerBatch } from '../../controller/src/runtime/batch';
import {
  batches,
  checkpointsOf,
  controllerView,
  lossJump,
  oneTo,
  stepsOf,
  workerZeroBatches,
} from './checks';
import {
  allreduce,
  Generation,
  globalStep,
  inspectCheckpoint,
  killAll,
  killMidWrite,
  torchAvailability,
} from './harness';

const TORCH = torchAvailability();
if (!TORCH.ok) console.warn(`test/torch/ddp.test.ts skipped: ${TORCH.reason}`);

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'optimus-ddp-'));
  dirs.push(d);
  return d;
};
afterEach(killAll);
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A global batch every world size here divides: the resized run must compute what one rank does. */
const B = 60;
const SPE = 20;
const END = 90;
const ARGS = ['--log-every', '1', '--steps-per-epoch', String(SPE), '--checkpoint-every', '0'];

describe.skipIf(!TORCH.ok)(
  `all-reduce trainer on real torch${TORCH.ok ? '' : ` (skipped: ${TORCH.reason})`}`,
  () => {
    it('resizes 2 → 3 → 1 ranks through SIGTERM with no step lost or doubled and the loss of an unresized run', async () => {
      const dir = tmp();
      const reference = await Generation.start({
        shape: allreduce(1),
        batchSize: B,
        checkpointDir: tmp(),
        args: [...ARGS, '--max-steps', String(END)],
      });
      const first = await Generation.start({
        shape: allreduce(2),
        batchSize: B,
        checkpointDir: dir,
        args: ARGS,
      });
      await first.untilStep(20);
      await first.stop(); // every rank at once, as Kubernetes deletes a job's pods
      expect(await first.exitCodes(), first.stderr()).toEqual([0, 0]);

      // This generation says "stopped on request" with 143 (for a backend that tells it by the code).
      const second = await Generation.start({
        shape: allreduce(3),
        batchSize: B,
        checkpointDir: dir,
        args: [...ARGS, '--stop-exit-code', '143'],
      });
      const resumedAt = globalStep(batches(first.worker0.records()).at(-1)!);
      await second.untilStep(resumedAt + 20);
      await second.stop({ gapMs: 300 }); // one by one, as local mode signals each process
      expect(await second.exitCodes(), second.stderr()).toEqual([143, 143, 143]);

      const third = await Generation.start({
        shape: allreduce(1),
        batchSize: B,
        checkpointDir: dir,
        args: [...ARGS, '--max-steps', String(END)],
      });
      expect(await third.exitCodes(), third.stderr()).toEqual([0]);
      expect(await reference.exitCodes(), reference.stderr()).toEqual([0]);
      const gens = [first, second, third];

      // Every step exactly once, across both resizes; every rank of a generation logs the same steps.
      const perGen = workerZeroBatches(gens);
      expect(perGen.flatMap(stepsOf)).toEqual(oneTo(END));
      for (const [i, g] of gens.entries())
        for (const t of g.workers) expect(stepsOf(batches(t.records())), t.name).toEqual(stepsOf(perGen[i]!));
      // The controller counts the same: epoch × stepsPerEpoch + batch + 1 is each record's step.
      const view = controllerView({ mode: 'sync', batchSize: B, stepsPerEpoch: SPE }, gens);
      expect(view.stepsDone).toBe(END);
      expect([...new Set(view.lossSteps)]).toEqual(oneTo(END));

      // Each stop: one checkpoint record, from rank 0 only, of the last step logged; the file on disk.
      for (const [i, g] of [first, second].entries()) {
        const announced = checkpointsOf(g.worker0.records());
        expect(announced.map(globalStep)).toEqual([globalStep(perGen[i]!.at(-1)!)]);
        for (const t of g.workers.slice(1)) expect(checkpointsOf(t.records())).toEqual([]);
      }
      expect(inspectCheckpoint(dir)?.step).toBe(END);

      // The global batch of every step is the job's, split over this generation's ranks.
      for (const [i, g] of gens.entries()) {
        const w = g.shape.workers;
        for (const r of perGen[i]!) {
          expect(r.metrics['global_batch']).toBe(effectiveGlobalBatch('sync', B, w));
          expect(r.metrics['batch_size']).toBe(perWorkerBatch('sync', B, w));
          expect((r.samplesPerSec ?? 0) * (r.stepTime ?? 0)).toBeCloseTo(perWorkerBatch('sync', B, w), 0);
        }
      }

      // Same samples per step in the same order: the loss is the unresized run's, step by step.
      const reference0 = new Map(
        batches(reference.worker0.records()).map((r) => [globalStep(r), r.loss ?? NaN]),
      );
      for (const r of perGen.flat())
        expect(Math.abs((r.loss ?? NaN) - reference0.get(globalStep(r))!)).toBeLessThan(2e-3);
      // … and it is real progress, continuous across each resize.
      const all = perGen.flat().map((r) => r.loss ?? NaN);
      expect(Math.max(...all.slice(-10))).toBeLessThan(0.85 * Math.min(...all.slice(0, 3)));
      for (const i of [0, 1]) {
        const j = lossJump(perGen[i]!, perGen[i + 1]!);
        expect(j.jump, JSON.stringify(j)).toBeLessThan(3 * j.noise + 0.05);
      }
    }, 300_000);

    it('a rank 0 killed mid-write leaves the last checkpoint whole, the others stop, the resume continues from it', async () => {
      const dir = tmp();
      const args = ['--steps-per-epoch', String(SPE), '--hidden', '1024']; // ~9 MB: a write takes a while
      const run = await Generation.start({
        shape: allreduce(2),
        batchSize: B,
        checkpointDir: dir,
        args: [...args, '--log-every', '5', '--checkpoint-every', '1'],
      });
      await run.untilStep(2);
      await killMidWrite(dir, run.worker0);
      const [rank0, rank1] = await Promise.all(run.tasks.map((t) => t.exited));
      expect(rank0?.signal).toBe('SIGKILL');
      expect(rank1?.code, run.stderr()).toBe(1); // its peer is gone: it fails, and writes nothing
      expect(run.workers[1]!.stderr).toContain('no checkpoint written');
      expect(readdirSync(dir).some((n) => n.includes('.pt.tmp-'))).toBe(true); // killed mid-write

      const whole = inspectCheckpoint(dir)!;
      const announced = checkpointsOf(run.worker0.records()).map(globalStep);
      expect(whole.step).toBe(announced.at(-1)); // the newest complete file, never an older one

      // Another task's job cannot resume this checkpoint: refused, not trained on.
      const foreign = await Generation.start({
        shape: allreduce(1),
        batchSize: B,
        checkpointDir: dir,
        args: [...args, '--seed', '7'],
      });
      expect(await foreign.exitCodes()).toEqual([2]);
      expect(foreign.worker0.stderr).toContain('use another checkpoint directory');
      // A newer file that does not load (a disk gone bad) is skipped for the newest one that does.
      const unreadable = join(dir, `ckpt-${String(whole.step + 100).padStart(12, '0')}.pt`);
      writeFileSync(unreadable, 'not a checkpoint');

      const resumed = await Generation.start({
        shape: allreduce(1),
        batchSize: B,
        checkpointDir: dir,
        args: [...args, '--log-every', '1', '--checkpoint-every', '0', '--max-steps', String(whole.step + 3)],
      });
      expect(await resumed.exitCodes(), resumed.stderr()).toEqual([0]);
      expect(stepsOf(batches(resumed.worker0.records()))).toEqual([1, 2, 3].map((k) => whole.step + k));
      expect(resumed.worker0.stderr).toContain(`skipping unreadable checkpoint ${unreadable}`);
      expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
      rmSync(unreadable);
      expect(inspectCheckpoint(dir)?.step).toBe(whole.step + 3);
    }, 180_000);
  },
);

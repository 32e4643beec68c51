/**
 * The parameter-server reference trainer (charts/optimus/examples/pytorch/ps_train.py) on real
 * torch.distributed.rpc: PS and workers as real processes, resized through SIGTERM → checkpoint →
 * restart with other numbers of PS and workers, sync and async, judged from the log lines as the
 * sidecar parses them. Skipped, saying why, where `/usr/bin/python3 -c 'import torch'` fails.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
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
  EXAMPLES,
  Generation,
  globalStep,
  inspectCheckpoint,
  killAll,
  killMidWrite,
  paramServer,
  PYTHON,
  torchAvailability,
} from './harness';

const TORCH = torchAvailability();
if (!TORCH.ok) console.warn(`test/torch/ps.test.ts skipped: ${TORCH.reason}`);

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'optimus-ps-'));
  dirs.push(d);
  return d;
};
afterEach(killAll);
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const SPE = 20;
const ARGS = ['--log-every', '1', '--steps-per-epoch', String(SPE), '--checkpoint-every', '0'];

describe.skipIf(!TORCH.ok)(
  `parameter-server trainer on real torch${TORCH.ok ? '' : ` (skipped: ${TORCH.reason})`}`,
  () => {
    it('sync: 1 PS × 2 → 2 PS × 3 → 3 PS × 1 workers, every step once, the batch split as the controller splits it', async () => {
      const B = 64; // 3 workers take 21 each: a step of 63 samples
      const END = 80;
      const dir = tmp();
      // The same model, data and update as the all-reduce trainer: one rank is the sync reference.
      const reference = await Generation.start({
        shape: allreduce(1),
        batchSize: B,
        checkpointDir: tmp(),
        args: [...ARGS, '--max-steps', String(END)],
      });
      const first = await Generation.start({
        shape: paramServer(1, 2, 'sync'),
        batchSize: B,
        checkpointDir: dir,
        args: ARGS,
      });
      await first.untilStep(20);
      await first.stop();
      expect(await first.exitCodes(), first.stderr()).toEqual([0, 0, 0]);
      const stop1 = globalStep(batches(first.worker0.records()).at(-1)!);

      const second = await Generation.start({
        shape: paramServer(2, 3, 'sync'),
        batchSize: B,
        checkpointDir: dir,
        args: ARGS,
      });
      await second.untilStep(stop1 + 20);
      await second.stop({ gapMs: 300 }); // the PS first: they must keep serving until worker 0 has read them
      expect(await second.exitCodes(), second.stderr()).toEqual([0, 0, 0, 0, 0]);

      const third = await Generation.start({
        shape: paramServer(3, 1, 'sync'),
        batchSize: B,
        checkpointDir: dir,
        args: [...ARGS, '--max-steps', String(END)],
      });
      expect(await third.exitCodes(), third.stderr()).toEqual([0, 0, 0, 0]);
      expect(await reference.exitCodes(), reference.stderr()).toEqual([0]);
      const gens = [first, second, third];

      const perGen = workerZeroBatches(gens);
      expect(perGen.flatMap(stepsOf)).toEqual(oneTo(END));
      for (const [i, g] of gens.entries()) {
        for (const t of g.workers) expect(stepsOf(batches(t.records())), t.name).toEqual(stepsOf(perGen[i]!));
        for (const t of g.tasks.filter((t) => t.role === 'ps')) expect(t.records(), t.name).toEqual([]);
      }
      const view = controllerView({ mode: 'sync', batchSize: B, stepsPerEpoch: SPE }, gens);
      expect(view.stepsDone).toBe(END);
      expect([...new Set(view.lossSteps)]).toEqual(oneTo(END));
      for (const [i, g] of [first, second].entries()) {
        expect(checkpointsOf(g.worker0.records()).map(globalStep)).toEqual([globalStep(perGen[i]!.at(-1)!)]);
        for (const t of g.workers.slice(1)) expect(checkpointsOf(t.records())).toEqual([]);
      }
      expect(inspectCheckpoint(dir)?.step).toBe(END);

      for (const [i, g] of gens.entries()) {
        const w = g.shape.workers;
        for (const r of perGen[i]!) {
          expect(r.metrics['global_batch']).toBe(effectiveGlobalBatch('sync', B, w)); // 64, 63, 64
          expect(r.metrics['batch_size']).toBe(perWorkerBatch('sync', B, w));
        }
      }
      // Until the first resize the global batch is the reference's 64: the same loss, step by step.
      const reference0 = new Map(
        batches(reference.worker0.records()).map((r) => [globalStep(r), r.loss ?? NaN]),
      );
      for (const r of perGen[0]!)
        expect(Math.abs((r.loss ?? NaN) - reference0.get(globalStep(r))!)).toBeLessThan(2e-3);
      for (const i of [0, 1]) {
        const j = lossJump(perGen[i]!, perGen[i + 1]!);
        expect(j.jump, JSON.stringify(j)).toBeLessThan(3 * j.noise + 0.05);
      }
      const all = perGen.flat().map((r) => r.loss ?? NaN);
      expect(Math.max(...all.slice(-10))).toBeLessThan(0.85 * Math.min(...all.slice(0, 3)));
    }, 300_000);

    it('async: 2 PS × 2 → 1 PS × 3 workers, every update counted once by the worker that made it', async () => {
      const B = 32;
      const END = 120;
      const dir = tmp();
      const first = await Generation.start({
        shape: paramServer(2, 2, 'async'),
        batchSize: B,
        checkpointDir: dir,
        args: ARGS,
      });
      await first.untilStep(40);
      await first.stop();
      expect(await first.exitCodes(), first.stderr()).toEqual([0, 0, 0, 0]);
      const second = await Generation.start({
        shape: paramServer(1, 3, 'async'),
        batchSize: B,
        checkpointDir: dir,
        args: [...ARGS, '--max-steps', String(END)],
      });
      expect(await second.exitCodes(), second.stderr()).toEqual([0, 0, 0, 0]);

      // Each update is logged once, by the worker whose push it was: together exactly 1..END.
      const updates = (g: Generation) => g.workers.flatMap((t) => stepsOf(batches(t.records())));
      const stop1 = Math.max(...updates(first));
      expect([...updates(first), ...updates(second)].sort((a, b) => a - b)).toEqual(oneTo(END));
      expect(checkpointsOf(first.worker0.records()).map(globalStep)).toEqual([stop1]);
      for (const t of [...first.workers.slice(1), ...second.workers.slice(1)])
        expect(checkpointsOf(t.records())).toEqual([]);
      expect(inspectCheckpoint(dir)?.step).toBe(END);

      // The controller's estimate from worker 0's records is within the updates of one round.
      const view = controllerView({ mode: 'async', batchSize: B, stepsPerEpoch: SPE }, [first, second]);
      expect(Math.abs(view.stepsDone - END)).toBeLessThan(2 * 3);
      for (const r of [first, second].flatMap((g) => g.workers.flatMap((t) => batches(t.records())))) {
        expect(r.metrics['global_batch']).toBe(B); // async: one worker's batch is one update
        expect(r.metrics['batch_size']).toBe(B);
      }
      const [before, after] = workerZeroBatches([first, second]);
      const j = lossJump(before!, after!);
      expect(j.jump, JSON.stringify(j)).toBeLessThan(3 * j.noise + 0.05);
      const all = [...before!, ...after!].map((r) => r.loss ?? NaN);
      expect(all.slice(-10).reduce((a, b) => a + b) / 10).toBeLessThan(0.85 * all[0]!);
    }, 300_000);

    it('a worker 0 killed mid-write leaves the last checkpoint whole; the rest stop within the grace period', async () => {
      const dir = tmp();
      const args = ['--steps-per-epoch', String(SPE), '--hidden', '1024'];
      const grace = 6;
      const run = await Generation.start({
        shape: paramServer(1, 2, 'sync'),
        batchSize: 64,
        checkpointDir: dir,
        graceSeconds: grace,
        args: [...args, '--log-every', '5', '--checkpoint-every', '1'],
      });
      await run.untilStep(2);
      await killMidWrite(dir, run.worker0);
      expect((await run.worker0.exited).signal).toBe('SIGKILL');
      const stoppedAt = performance.now();
      await run.stop(); // what the controller does next: the job's other pods are deleted
      const codes = await run.exitCodes();
      expect(performance.now() - stoppedAt).toBeLessThan(grace * 1000);
      expect(codes.filter((c, i) => run.tasks[i] !== run.worker0)).toEqual([1, 1]); // nothing written
      expect(readdirSync(dir).some((n) => n.includes('.pt.tmp-'))).toBe(true);

      const whole = inspectCheckpoint(dir)!;
      expect(whole.step).toBe(checkpointsOf(run.worker0.records()).map(globalStep).at(-1));
      const resumed = await Generation.start({
        shape: paramServer(1, 1, 'sync'),
        batchSize: 64,
        checkpointDir: dir,
        args: [...args, '--log-every', '1', '--checkpoint-every', '0', '--max-steps', String(whole.step + 3)],
      });
      expect(await resumed.exitCodes(), resumed.stderr()).toEqual([0, 0]);
      expect(stepsOf(batches(resumed.worker0.records()))).toEqual([1, 2, 3].map((k) => whole.step + k));
      expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    }, 180_000);

    it('a scheduler task (Optimus starts one per PS job) is not in the RPC world: it waits, and exits 0 on SIGTERM', async () => {
      const child = spawn(PYTHON, [join(EXAMPLES, 'ps_train.py')], {
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          OPTIMUS_ROLE: 'scheduler',
          OPTIMUS_NUM_PS: '2',
          OPTIMUS_NUM_WORKERS: '2',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      await expect.poll(() => err.includes('needs no scheduler'), { timeout: 60_000 }).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }, 90_000);
  },
);

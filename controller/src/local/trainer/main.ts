/**
 * The emulated MXNet trainer: one process per task. A worker appends genuine MXNet log lines
 * to its log at the speed its ground truth gives for the current shape; worker 0 keeps the
 * checkpoint (the global step). SIGTERM (or SIGINT) → checkpoint → exit 143, and a restart
 * resumes from the checkpoint, so a resize keeps progress. Exit 0 once the job has converged.
 * A parameter server just waits to be stopped.
 */
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { READY_LINE } from './ready';
import { trainerConfigSchema, type TrainerConfig } from './config';
import { perWorkerBatch } from '../../runtime/batch';
import { rng, trueEpochs, trueLoss, trueSpeed } from './ground-truth';
import { checkpointLine, speedometerLine, startLine, timeCostLine, trainMetricLine } from './mxnet-log';

const cfg: TrainerConfig = trainerConfigSchema.parse(
  JSON.parse(process.env['OPTIMUS_TRAINER_CONFIG'] ?? '{}'),
);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rank = cfg.index;
let step = readCheckpoint();
let stopping = false;

function readCheckpoint(): number {
  if (!existsSync(cfg.checkpointPath)) return 0;
  const parsed = JSON.parse(readFileSync(cfg.checkpointPath, 'utf8')) as { step?: unknown };
  return typeof parsed.step === 'number' ? parsed.step : 0;
}

function saveCheckpoint(): void {
  if (cfg.role !== 'worker' || cfg.index !== 0) return;
  const tmp = `${cfg.checkpointPath}.tmp`;
  writeFileSync(tmp, JSON.stringify({ step: Math.floor(step) }));
  renameSync(tmp, cfg.checkpointPath);
  log(
    checkpointLine({
      rank,
      at: new Date(),
      // MXNet's save_checkpoint names the file after the epoch: `prefix-%04d.params`.
      path: `${cfg.checkpointPath}-${String(Math.floor(step / cfg.stepsPerEpoch)).padStart(4, '0')}.params`,
    }),
  );
}

function log(line: string): void {
  appendFileSync(cfg.logPath, `${line}\n`);
}

/**
 * Checkpoint and exit. The done marker tells the sidecar to deliver the rest of the log and exit
 * too: the controller writes it as well once we are gone, but a controller that dies in between
 * (mid-resize, or killed) would otherwise leave the sidecar waiting forever.
 */
function stop(): void {
  if (stopping) return;
  stopping = true;
  saveCheckpoint();
  if (cfg.doneMarker !== null) writeFileSync(cfg.doneMarker, '');
  process.exit(143);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

// Orphaned (the controller died): checkpoint, let the sidecar deliver the rest, and exit, so a
// crashed controller leaves no training running; its successor resumes from the checkpoint.
const parent = cfg.parentPid ?? process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();

async function train(): Promise<void> {
  const noise = rng(cfg.seed);
  const jobSpeed = trueSpeed(cfg, cfg.ps, cfg.workers);
  // Global steps one worker's batch stands for, and the worker's own steps per job second.
  const stride = cfg.mode === 'async' ? cfg.workers : 1;
  const workerSpeed = jobSpeed / stride;
  const perWorker = perWorkerBatch(cfg.mode, cfg.batchSize, cfg.workers);
  const total = trueEpochs(cfg) * cfg.stepsPerEpoch;
  log(startLine({ rank, at: new Date(), ps: cfg.ps, workers: cfg.workers, step }));
  await sleep((cfg.restartCostSec * 1000) / cfg.timeScale);
  let epochStartedAt = Date.now();
  while (step < total && !stopping) {
    const epoch = Math.floor(step / cfg.stepsPerEpoch);
    const batchInEpoch = Math.floor((step - epoch * cfg.stepsPerEpoch) / stride);
    const batchesPerEpoch = Math.ceil(cfg.stepsPerEpoch / stride);
    const batches = Math.min(cfg.frequent - (batchInEpoch % cfg.frequent), batchesPerEpoch - batchInEpoch);
    const realSpeed = workerSpeed * Math.max(0.2, 1 + cfg.speedNoise * noise.gaussian());
    await sleep((batches / realSpeed / cfg.timeScale) * 1000);
    if (stopping) return;
    step = Math.min(total, step + batches * stride);
    const loss = trueLoss(cfg, step) * Math.max(0.05, 1 + cfg.lossNoise * noise.gaussian());
    const to = batchInEpoch + batches;
    const at = new Date();
    if (to % cfg.frequent === 0 || to === batchesPerEpoch) {
      log(
        speedometerLine({
          rank,
          at,
          epoch,
          from: to - (to % cfg.frequent || cfg.frequent),
          to,
          samplesPerSec: realSpeed * perWorker,
          loss,
        }),
      );
    }
    if (to >= batchesPerEpoch) {
      step = (epoch + 1) * cfg.stepsPerEpoch;
      log(
        trainMetricLine({
          rank,
          at,
          epoch,
          loss: trueLoss(cfg, step) * (1 + cfg.lossNoise * noise.gaussian() * 0.3),
        }),
      );
      log(timeCostLine({ rank, at, epoch, seconds: ((Date.now() - epochStartedAt) / 1000) * cfg.timeScale }));
      epochStartedAt = Date.now();
      saveCheckpoint();
    }
  }
}

if (cfg.fault === 'crash') process.exit(1);
// Running (a pod's Running phase): the executor's start waits for this line.
if (cfg.fault !== 'hang') process.stdout.write(`${READY_LINE}\n`);
if (cfg.role === 'ps') {
  setInterval(() => {}, 60_000);
} else {
  await train();
  if (!stopping) process.exit(0);
}

/**
 * `npm run bench:fit [-- --json] [--jobs N] [--points N] [--rounds N]`: how long refitting BOTH
 * estimation models takes for a whole cluster — by default 4,000 jobs with 50 points each (the paper's
 * scalability scale). Inputs are generated up front (seeded), so only the fits are timed; the first
 * (JIT-compiling) round is reported apart from the median of the steady-state rounds.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { estimateConvergence } from '../models/convergence/index';
import type { ConvergenceRule, LossPoint } from '../models/convergence/types';
import { gaussian, mixSeed, sampleIndices, seededRandom } from '../models/random';
import { fitPaperSpeedModel, fitSpeedModel, type SpeedSample } from '../models/speed/index';
import { SYNTHETIC_LAWS } from '../models/speed/synthetic';

interface BenchJob {
  readonly mode: 'sync' | 'async';
  readonly globalBatch: number;
  readonly samples: SpeedSample[];
  readonly losses: LossPoint[];
}

const RULE: ConvergenceRule = { stepsPerEpoch: 100, threshold: 0.02, patience: 3 };

function makeJob(index: number, points: number): BenchJob {
  const random = seededRandom(mixSeed(2018, index));
  const law = SYNTHETIC_LAWS[index % SYNTHETIC_LAWS.length]!;
  const grid = Array.from({ length: 20 * 20 }, (_, i) => ({
    ps: 1 + (i % 20),
    workers: 1 + Math.floor(i / 20),
  }));
  const samples = sampleIndices(random, grid.length, Math.min(points, grid.length)).map((i) => {
    const { ps, workers } = grid[i]!;
    return { ps, workers, stepsPerSec: law.stepsPerSec(ps, workers) * Math.exp(0.04 * gaussian(random)) };
  });
  // Eq. 1 loss curve, 5 points per epoch over 10 epochs, 3% noise.
  const b0 = 0.1 + 0.3 * random();
  const losses = Array.from({ length: points }, (_, i) => {
    const step = Math.round((i + 0.5) * (RULE.stepsPerEpoch / 5));
    return {
      step,
      loss: (1 / ((b0 * step) / RULE.stepsPerEpoch + 1) + 0.05) * (1 + 0.03 * gaussian(random)),
    };
  });
  return { mode: law.mode, globalBatch: law.globalBatch, samples, losses };
}

interface Timing {
  readonly wall: number;
  readonly cpu: number;
}

/** The round with the median CPU time. */
function medianTiming(runs: readonly Timing[]): Timing {
  const sorted = [...runs].sort((a, b) => a.cpu - b.cpu);
  return sorted[Math.floor((sorted.length - 1) / 2)] as Timing;
}

/** Wall-clock seconds of `run` (and its CPU seconds, which a busy shared machine inflates less). */
function timeIt(run: () => void): Timing {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  run();
  const cpu = process.cpuUsage(cpu0);
  return { wall: (performance.now() - start) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

/**
 * Milliseconds of a fixed reference loop (2·10⁷ multiply-adds): lets a reader scale the figures when
 * the machine is shared or busy (about 25 ms on an idle core of this machine).
 */
function referenceLoopMs(): number {
  const data = new Float64Array(64).fill(1);
  let acc = 0;
  const start = performance.now();
  for (let i = 0; i < 2e7; i++) acc += (data[i & 63] as number) * 1.0001;
  const ms = performance.now() - start;
  return acc > 0 ? ms : Number.NaN;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean' },
      jobs: { type: 'string' },
      points: { type: 'string' },
      rounds: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a positive integer, got "${values.rounds}"`);
  const jobs = Number(values.jobs ?? 4000);
  const points = Number(values.points ?? 50);
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new Error(`--jobs must be a positive integer, got "${values.jobs}"`);
  if (!Number.isInteger(points) || points < 1)
    throw new Error(`--points must be a positive integer, got "${values.points}"`);
  const input = Array.from({ length: jobs }, (_, i) => makeJob(i, points));
  const sink = { value: 0 };
  const fitters = {
    speed: (job: BenchJob) => fitSpeedModel(job.samples, job).predict(4, 4).stepsPerSec,
    convergence: (job: BenchJob) => (estimateConvergence(job.losses, RULE).status === 'ok' ? 1 : 0),
    paperSpeed: (job: BenchJob) => fitPaperSpeedModel(job.samples, job).predict(4, 4).stepsPerSec,
  };
  const round = (fit: (job: BenchJob) => number): Timing =>
    timeIt(() => {
      for (const job of input) sink.value += fit(job);
    });
  // The first round pays for JIT compilation (the controller does it once per process): reported apart.
  // Steady-state rounds, one model at a time, are what every later scheduling round costs; the median is
  // reported (the machine is shared, so single rounds are noisy).
  const firstRound = { speed: round(fitters.speed), convergence: round(fitters.convergence) };
  round(fitters.paperSpeed);
  const runs = { speed: [] as Timing[], convergence: [] as Timing[], paperSpeed: [] as Timing[] };
  for (let r = 0; r < rounds; r++) {
    runs.speed.push(round(fitters.speed));
    runs.convergence.push(round(fitters.convergence));
    runs.paperSpeed.push(round(fitters.paperSpeed));
  }
  const speed = medianTiming(runs.speed);
  const convergence = medianTiming(runs.convergence);
  const paperSpeed = medianTiming(runs.paperSpeed);
  const result = {
    jobs,
    pointsPerJob: points,
    rounds,
    speedFitSeconds: speed.wall,
    convergenceFitSeconds: convergence.wall,
    totalSeconds: speed.wall + convergence.wall,
    cpuSeconds: { speed: speed.cpu, convergence: convergence.cpu, total: speed.cpu + convergence.cpu },
    paperSpeedFitSeconds: paperSpeed.wall,
    firstRoundCpuSeconds: {
      speed: firstRound.speed.cpu,
      convergence: firstRound.convergence.cpu,
      total: firstRound.speed.cpu + firstRound.convergence.cpu,
    },
    loadAverage: os.loadavg()[0],
    referenceLoopMs: referenceLoopMs(),
  };
  const first = {
    wall: firstRound.speed.wall + firstRound.convergence.wall,
    cpu: result.firstRoundCpuSeconds.total,
  };
  if (!Number.isFinite(sink.value)) process.stderr.write('bench: a fit returned a non-finite value\n');
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const ms = (t: Timing): string =>
    `${(t.wall * 1000).toFixed(0).padStart(6)} ms wall ${(t.cpu * 1000).toFixed(0).padStart(6)} ms CPU  (${((t.cpu / jobs) * 1e6).toFixed(0)} µs CPU/job)`;
  process.stdout.write(
    [
      `refitting ${jobs} jobs × ${points} points (load average ${(result.loadAverage ?? 0).toFixed(1)}, reference loop ${result.referenceLoopMs.toFixed(0)} ms; ~25 ms when idle)`,
      `  speed model (best):          ${ms(speed)}`,
      `  convergence model (Eq. 1):   ${ms(convergence)}`,
      `  both:                        ${ms({ wall: result.totalSeconds, cpu: result.cpuSeconds.total })}`,
      `  paper Eq. 3/4 (ml-fcnnls):   ${ms(paperSpeed)}`,
      `  (median of ${rounds} steady-state rounds; the first round, with JIT compilation, took both models ${ms(first).trim()})`,
    ].join('\n') + '\n',
  );
}

main();

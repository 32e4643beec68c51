/**
 * `npm run bench:restart [-- --json] [--reps N] [--hidden 128,1024] [--kinds allreduce,ps-sync,ps-async]
 * [--out test/data/restart-cost.json]`: what a resize costs the real PyTorch reference trainers,
 * phase by phase — SIGTERM → checkpoint written → every process exited → new processes started →
 * first step logged — per trainer kind, growing and shrinking, at model sizes that scale the
 * checkpoint. Each figure is the median (min–max) over the resizes of one run; the same run measures
 * `import torch` in one process as the baseline every start pays. The JSON (--json, --out) holds every
 * resize, a per-kind table (a fixed cost and a cost per checkpoint MB) and the assumptions written
 * down; `simulate --restart-pause measured[:kind]` takes the median of its resizes (restart-cost.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { max, median, min } from 'simple-statistics';
import {
  allreduce,
  Generation,
  killAll,
  paramServer,
  PYTHON,
  shapeText,
  torchAvailability,
  type Shape,
} from './harness';

const VARIANTS = {
  allreduce: [allreduce(2), allreduce(3)],
  'ps-sync': [paramServer(1, 2, 'sync'), paramServer(2, 3, 'sync')],
  'ps-async': [paramServer(1, 2, 'async'), paramServer(2, 3, 'async')],
} as const satisfies Record<string, readonly [Shape, Shape]>;
type Variant = keyof typeof VARIANTS;

const BATCH = 64;
/** Steps every generation trains before it is stopped: past its first (warm-up) steps. */
const STEPS_PER_GENERATION = 10;

interface Resize {
  readonly kind: Variant;
  readonly from: string;
  readonly to: string;
  readonly hidden: number;
  readonly checkpointBytes: number;
  /** The write itself, as the trainer timed it (torch.save, fsync, rename). */
  readonly writeSeconds: number;
  readonly signalToCheckpoint: number;
  readonly checkpointToExit: number;
  readonly exitToStart: number;
  readonly startToFirstStep: number;
  readonly total: number;
}
const PHASES = [
  'signalToCheckpoint',
  'checkpointToExit',
  'exitToStart',
  'startToFirstStep',
  'total',
] as const;

const seconds = (ms: number): number => Math.round(ms) / 1000;

/** Grows and shrinks one job `reps` times each, measuring every resize. */
async function measure(kind: Variant, hidden: number, reps: number): Promise<Resize[]> {
  const dir = mkdtempSync(join(tmpdir(), 'optimus-bench-restart-'));
  const shapes = VARIANTS[kind];
  const start = (shape: Shape) =>
    Generation.start({
      shape,
      batchSize: BATCH,
      checkpointDir: dir,
      args: ['--log-every', '5', '--checkpoint-every', '0', '--hidden', String(hidden)],
    });
  const out: Resize[] = [];
  try {
    let gen = await start(shapes[0]);
    await gen.untilStep(STEPS_PER_GENERATION);
    for (let i = 0; i < 2 * reps; i++) {
      const next = shapes[(i + 1) % 2]!;
      const signalled = performance.now();
      await gen.stop();
      const codes = await gen.exitCodes();
      if (codes.some((c) => c !== 0)) throw new Error(`exit codes ${codes.join(',')}:\n${gen.stderr()}`);
      const exited = Math.max(...gen.tasks.map((t) => t.exitedAt!));
      const record = gen.worker0
        .json()
        .find((l) => l.value['kind'] === 'checkpoint' && l.value['reason'] === 'stop');
      if (!record) throw new Error(`no stop checkpoint:\n${gen.stderr()}`);
      const step = Number(record.value['global_step']);
      const nextGen = await start(next);
      const started = Math.min(...nextGen.tasks.map((t) => t.startedAt));
      await nextGen.untilStep(step + 1);
      while (!nextGen.workers.every((t) => t.json().some((l) => l.value['kind'] === 'batch')))
        await new Promise((r) => setTimeout(r, 50));
      // The first step any worker logs (async workers each log their own updates).
      const firsts = nextGen.workers
        .map((t) => t.json().find((l) => l.value['kind'] === 'batch'))
        .filter((l) => l !== undefined);
      const first = firsts.reduce((a, b) => (b.at < a.at ? b : a));
      const resumedAt = Math.min(...firsts.map((l) => Number(l.value['global_step'])));
      if (resumedAt !== step + 1) throw new Error(`resumed at ${resumedAt}, not ${step + 1}`);
      out.push({
        kind,
        from: shapeText(gen.shape),
        to: shapeText(next),
        hidden,
        checkpointBytes: Number(record.value['bytes']),
        writeSeconds: Number(record.value['seconds']),
        signalToCheckpoint: seconds(record.at - signalled),
        checkpointToExit: seconds(exited - record.at),
        exitToStart: seconds(started - exited),
        startToFirstStep: seconds(first.at - started),
        total: seconds(first.at - signalled),
      });
      process.stderr.write(
        `  ${kind} ${shapeText(gen.shape)} → ${shapeText(next)} hidden ${hidden}: ${out.at(-1)!.total.toFixed(2)} s\n`,
      );
      await nextGen.untilStep(step + STEPS_PER_GENERATION);
      gen = nextGen;
    }
    await gen.stop();
    await gen.exitCodes();
  } finally {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Seconds `import torch` takes in one fresh process, repeated: what every task start pays first. */
function importTorchSeconds(reps: number): number[] {
  return Array.from({ length: reps }, () => {
    const t = performance.now();
    spawnSync(PYTHON, ['-c', 'import torch, torch.distributed.rpc']);
    return seconds(performance.now() - t);
  });
}

const spread = (xs: number[]) => ({ median: median(xs), min: min(xs), max: max(xs), n: xs.length });

/** Per kind: median of each phase, and total = fixed + perMB × checkpoint MB through the size medians. */
function table(resizes: readonly Resize[]) {
  const kinds: Record<string, unknown> = {};
  for (const kind of Object.keys(VARIANTS) as Variant[]) {
    const mine = resizes.filter((r) => r.kind === kind);
    if (mine.length === 0) continue;
    const sizes = [...new Set(mine.map((r) => r.hidden))].sort((a, b) => a - b);
    const points = sizes.map((h) => {
      const at = mine.filter((r) => r.hidden === h);
      return { mb: median(at.map((r) => r.checkpointBytes)) / 1e6, total: median(at.map((r) => r.total)) };
    });
    const lo = points[0]!;
    const hi = points.at(-1)!;
    const perMB = hi.mb > lo.mb ? Math.max(0, (hi.total - lo.total) / (hi.mb - lo.mb)) : 0;
    kinds[kind] = {
      fixedSeconds: Math.round((lo.total - perMB * lo.mb) * 1000) / 1000,
      secondsPerMB: Math.round(perMB * 10000) / 10000,
      sizes: points,
      phases: Object.fromEntries(PHASES.map((p) => [p, spread(mine.map((r) => r[p]))])),
    };
  }
  return kinds;
}

const ASSUMPTIONS = [
  'One machine: every task is a local process; no pod scheduling, image pull or container start (a cluster adds them between "exited" and "started"; the controller adds its own reaction time before the signal).',
  'SIGTERM goes to every task at once (Kubernetes deletes all pods of a job together); the next generation starts as soon as the last task exited.',
  'The checkpoint directory is a local disk (fsync included); a network volume (NFS, EFS) writes and reads slower: scale secondsPerMB by its throughput.',
  'CPU-only torch 1.13 (Debian), one thread per task, several tasks sharing the cores: "startToFirstStep" is mostly importing torch and the rendezvous, and grows with the number of tasks started on the same cores.',
  'Restart cost = fixedSeconds + secondsPerMB × checkpoint MB, the line through the medians at the smallest and largest model measured; the checkpoint holds the parameters and the momentum (8 bytes per parameter).',
  'Measured on a shared machine: the figures are as loaded as the machine was (cpus and load average recorded beside them).',
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      reps: { type: 'string', default: '2' },
      hidden: { type: 'string', default: '128,1024' },
      kinds: { type: 'string', default: Object.keys(VARIANTS).join(',') },
      out: { type: 'string' },
    },
  });
  const torch = torchAvailability();
  if (!torch.ok) {
    process.stderr.write(`bench:restart needs torch: ${torch.reason}\n`);
    process.exit(1);
  }
  const reps = Number(values.reps);
  const hidden = values.hidden.split(',').map(Number);
  const kinds = values.kinds.split(',') as Variant[];
  for (const k of kinds)
    if (!(k in VARIANTS)) throw new Error(`unknown kind ${k}: ${Object.keys(VARIANTS).join(', ')}`);
  const loadBefore = os.loadavg()[0]!;
  const importTorch = importTorchSeconds(3);
  const resizes: Resize[] = [];
  for (const kind of kinds) for (const h of hidden) resizes.push(...(await measure(kind, h, reps)));
  const doc = {
    generatedBy: `npm run bench:restart -- --reps ${reps} --hidden ${values.hidden} --kinds ${values.kinds}`,
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      loadAverage1m: [loadBefore, os.loadavg()[0]!].map((l) => Math.round(l * 10) / 10),
    },
    unit: 'seconds',
    baseline: { importTorchOneProcess: spread(importTorch) },
    assumptions: ASSUMPTIONS,
    kinds: table(resizes),
    resizes,
  };
  if (values.out) writeFileSync(values.out, `${JSON.stringify(doc, null, 2)}\n`);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    return;
  }
  const fmt = (s: { median: number; min: number; max: number }) =>
    `${s.median.toFixed(2)} (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  console.log(
    `import torch, one process: ${fmt(doc.baseline.importTorchOneProcess)} s; load ${doc.machine.loadAverage1m.join(' → ')} on ${doc.machine.cpus} cpus`,
  );
  console.log(
    'kind      hidden  ckpt MB  signal→ckpt  ckpt→exit  exit→start  start→step  total (median, min–max, s)',
  );
  for (const kind of kinds)
    for (const h of hidden) {
      const rs = resizes.filter((r) => r.kind === kind && r.hidden === h);
      const col = (p: (typeof PHASES)[number]) => fmt(spread(rs.map((r) => r[p])));
      console.log(
        [
          kind.padEnd(9),
          String(h).padStart(6),
          (median(rs.map((r) => r.checkpointBytes)) / 1e6).toFixed(2).padStart(8),
          ...PHASES.map(col),
        ].join('  '),
      );
    }
  for (const [kind, t] of Object.entries(doc.kinds))
    console.log(
      `${kind}: restart ≈ ${(t as { fixedSeconds: number }).fixedSeconds} s + ${(t as { secondsPerMB: number }).secondsPerMB} s/MB`,
    );
}

await main();

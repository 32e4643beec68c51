/**
 * Times one full Optimus round (allocation + placement) on a random cluster. The clock is passed
 * in (`now`), so this module stays free of I/O; the CLI hands it `performance.now`.
 */
import { prepare } from '../core/prepare';
import type { PlacementJob } from '../core/parts';
import { optimusParts, optimusPolicy } from '../optimus';
import { randomRound, type RandomRoundOptions } from './random-round';

export interface RoundTiming {
  readonly jobs: number;
  readonly nodes: number;
  readonly tasks: number;
  /** Median over rounds of the whole `decide` call, seconds. */
  readonly seconds: number;
  /** Median of validation + allocation alone. */
  readonly allocationSeconds: number;
  /** Median of one placement pass alone. */
  readonly placementSeconds: number;
  /**
   * Median CPU time of the whole `decide` call, seconds: on a shared machine the wall-clock
   * figure includes time the process waited for a core; this one does not.
   */
  readonly cpuSeconds: number;
  readonly waiting: number;
  readonly rounds: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

/** `now()` returns wall-clock milliseconds, `cpu()` this process's CPU time in milliseconds. */
export function timeRound(
  options: RandomRoundOptions & { rounds: number },
  now: () => number,
  cpu: () => number,
): RoundTiming {
  const input = randomRound(options);
  const policy = optimusPolicy();
  const { allocator, placer } = optimusParts();
  const whole: number[] = [];
  const alloc: number[] = [];
  const place: number[] = [];
  const cpuTimes: number[] = [];
  let tasks = 0;
  let waiting = 0;
  for (let r = 0; r < options.rounds; r++) {
    let t = now();
    const c = cpu();
    const decision = policy.decide(input);
    whole.push((now() - t) / 1000);
    cpuTimes.push((cpu() - c) / 1000);
    tasks = decision.jobs.reduce((s, j) => s + (j.action === 'run' ? j.placement.length : 0), 0);
    waiting = decision.jobs.filter((j) => j.action === 'wait').length;
    t = now();
    const prepared = prepare(input);
    const allocation = allocator.allocate({ input: prepared, jobs: prepared.jobs });
    alloc.push((now() - t) / 1000);
    const jobs: PlacementJob[] = [];
    for (const job of prepared.jobs) {
      const shape = allocation.shapes.get(job.id);
      if (shape) jobs.push({ job, shape });
    }
    const free = prepared.servers.map((s) => Float64Array.from(s.allocatable));
    t = now();
    placer.place({ input: prepared, jobs, free });
    place.push((now() - t) / 1000);
  }
  return {
    jobs: options.jobs,
    nodes: options.nodes,
    tasks,
    seconds: median(whole),
    allocationSeconds: median(alloc),
    placementSeconds: median(place),
    cpuSeconds: median(cpuTimes),
    waiting,
    rounds: options.rounds,
  };
}

/**
 * CPU contention beside the fault suite (`OPTIMUS_FAULTS_CONTENTION`): busy loops that compete with
 * the processes under test, as other work on a loaded machine does. Faults that only show when the
 * controller, the broker and the sidecars are starved of CPU (issue 30: records lost under a broker
 * fault on a machine at load 3–9) are then reproduced on demand, not by luck.
 *
 * `OPTIMUS_FAULTS_CONTENTION=cores` starts one loop per core, a number starts that many; unset or 0
 * starts none. Each loop is a plain `node` process that exits by itself once its parent (the test
 * runner) is gone, so not even a runner killed with SIGKILL leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** Spins, and checks every ~10⁷ iterations whether the runner that started it still lives. */
const LOOP = `const p = process.ppid; for (;;) { for (let i = 0; i < 1e7; i++); if (process.ppid !== p) process.exit(0); }`;

/** How many loops a value of `OPTIMUS_FAULTS_CONTENTION` asks for; throws on anything else. */
export function contentionLoops(value: string | undefined, cores = availableParallelism()): number {
  if (value === undefined || value === '' || value === '0') return 0;
  if (value === 'cores') return cores;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 64)
    throw new Error(`OPTIMUS_FAULTS_CONTENTION must be "cores" or an integer 0–64, got "${value}"`);
  return n;
}

export interface Contention {
  readonly loops: number;
  readonly pids: readonly number[];
  stop(): Promise<void>;
}

/** Starts `loops` busy loops; `stop` kills them and waits for their exit. */
export function startContention(loops: number): Contention {
  const procs: ChildProcess[] = [];
  for (let i = 0; i < loops; i++) procs.push(spawn(process.execPath, ['-e', LOOP], { stdio: 'ignore' }));
  return {
    loops,
    pids: procs.flatMap((p) => (p.pid === undefined ? [] : [p.pid])),
    async stop() {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((resolve) => {
              if (p.exitCode !== null || p.signalCode !== null) return resolve();
              p.once('exit', () => resolve());
              p.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}

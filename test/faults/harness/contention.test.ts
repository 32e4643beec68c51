import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { contentionLoops, startContention } from './contention';

describe('OPTIMUS_FAULTS_CONTENTION', () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['cores', 2],
    ['3', 3],
  ])('%s → %i busy loops (on 2 cores)', (value, loops) => {
    expect(contentionLoops(value, 2)).toBe(loops);
  });

  it.each(['yes', '-1', '1.5', '65'])('refuses %s with a message naming the variable', (value) => {
    expect(() => contentionLoops(value, 2)).toThrow(
      /OPTIMUS_FAULTS_CONTENTION must be "cores" or an integer/,
    );
  });

  it('starts loops that burn CPU and stops every one of them', async () => {
    const c = startContention(1);
    const [pid] = c.pids as [number];
    // utime + stime, in clock ticks (fields 14 and 15 of /proc/<pid>/stat, after the command).
    const cpuTicks = (): number => {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(f[11]) + Number(f[12]);
    };
    // It spins: some CPU time within a second even on a machine crowded with other work.
    for (let i = 0; i < 100 && cpuTicks() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(cpuTicks()).toBeGreaterThan(0);
    await c.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

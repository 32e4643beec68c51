/** What the benchmark reads about a process from Linux's /proc: CPU time, wake-ups, resident memory. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const clkTck = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of process `pid` so far (clock-tick resolution). */
export const cpuSec = (pid: number): number => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / clkTck;
};

/** Voluntary context switches: how often the process went to sleep, i.e. its wake-ups. */
export const wakeups = (pid: number): number =>
  Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

export interface Memory {
  rss: number;
  /** Anonymous pages (heaps, compiled code): the process's own. */
  anon: number;
  /** File-backed pages (mostly the `node` binary's text, shared with other Node processes). */
  file: number;
}

/** Resident memory of process `pid`, in bytes, from one read of its status. */
export const memory = (pid: number): Memory => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number =>
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
};

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Medians of each field (taken separately). */
export const medianMemory = (xs: readonly Memory[]): Memory => ({
  rss: median(xs.map((m) => m.rss)),
  anon: median(xs.map((m) => m.anon)),
  file: median(xs.map((m) => m.file)),
});

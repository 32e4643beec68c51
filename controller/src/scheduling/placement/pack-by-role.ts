/**
 * Fallback of the Optimus placer, beyond the paper: when no even split fits (one half-full
 * server next to an empty one; GPU servers whose CPUs are taken), place workers, then PS, each
 * role packed onto the roomiest servers that can take it — so the PS of a GPU job may go to
 * CPU-only servers. More cross-server traffic than an even split, but better than a job waiting
 * next to idle resources. Still whole or nothing: nothing is committed unless every task fits.
 */
import type { PreparedJob } from '../core/prepare';
import { fits, subtract } from '../core/resource-vector';
import type { JobShape } from '../types';
import type { ServerCount } from './server-count';
import type { ServerIndex } from './server-index';
import type { FitTest } from './stranding';

export function packByRole(
  index: ServerIndex,
  job: PreparedJob,
  shape: JobShape,
  scanLimit: number,
  fit: FitTest = fits,
): ServerCount[] | null {
  const tentative = new Map<number, Float64Array>();
  const counts = new Map<number, { ps: number; workers: number }>();
  const roles = [
    { role: 'workers', count: shape.workers, demand: job.worker },
    { role: 'ps', count: shape.ps, demand: job.ps },
  ] as const;
  for (const { role, count, demand } of roles) {
    let left = count;
    if (left === 0) continue;
    index.visit(demand, { smallest: demand, largest: demand }, scanLimit, (s) => {
      let f = tentative.get(s);
      if (!f) {
        const actual = index.free[s];
        if (!actual || !fit(actual, demand)) return false; // most visits: no copy needed
        f = Float64Array.from(actual);
        tentative.set(s, f);
      }
      while (left > 0 && fit(f, demand)) {
        subtract(f, demand);
        left--;
        const c = counts.get(s) ?? { ps: 0, workers: 0 };
        c[role]++;
        counts.set(s, c);
      }
      return left === 0;
    });
    if (left > 0) return null;
  }
  return [...counts].map(([server, c]) => ({ server, ...c }));
}

/**
 * Bounds a job's stored observations to a byte budget (a ConfigMap holds at most 1 MiB). Pure.
 *
 * What is kept, and why:
 * - Worker `epoch` and `checkpoint` records are pinned: the convergence fit needs every epoch
 *   boundary, and they are few (one per epoch per worker).
 * - The newest {@link KEEP_RECENT} other records are kept whole: the current shape's speed and
 *   straggler figures, and a pre-run sample's count, come from them.
 * - Older other records (mostly `batch` lines) are thinned by halving, per task: every second one
 *   goes, the first of each task stays. Speeds are averaged per worker and shape, so halving keeps
 *   the means and lowers their weight; older loss points keep every other step.
 * - If that is not enough (a small budget), the oldest unpinned records go, and only when the
 *   pinned ones alone exceed the budget, the oldest of those.
 */
import type { StoredRecord } from '../../runtime/backend';

/** Non-pinned records at the tail that thinning never touches. */
export const KEEP_RECENT = 256;

const isPinned = (r: StoredRecord): boolean =>
  r.task.role === 'worker' && (r.record.kind === 'epoch' || r.record.kind === 'checkpoint');

const taskKey = (r: StoredRecord): string => `${r.task.role}/${r.task.index}`;

/** Bytes of one record as stored (a JSON line and its newline). */
export const recordBytes = (r: StoredRecord): number => Buffer.byteLength(JSON.stringify(r)) + 1;

export interface ThinResult {
  readonly kept: StoredRecord[];
  readonly dropped: number;
}

/** The records (in their order) that fit in `maxBytes`, thinned as described above. */
export function thinToBudget(records: readonly StoredRecord[], maxBytes: number): ThinResult {
  const sizes = records.map(recordBytes);
  let total = sizes.reduce((a, b) => a + b, 0);
  const alive = records.map(() => true);
  while (total > maxBytes) {
    const victims = halvingVictims(records, alive);
    if (victims.length === 0) break;
    for (const i of victims) [alive[i], total] = [false, total - sizes[i]!];
  }
  // Then the oldest of the recent unpinned records; only then the oldest pinned ones.
  for (const pinned of [false, true]) {
    for (let i = 0; i < records.length && total > maxBytes; i++) {
      if (!alive[i] || isPinned(records[i]!) !== pinned) continue;
      [alive[i], total] = [false, total - sizes[i]!];
    }
  }
  const kept = records.filter((_, i) => alive[i]);
  return { kept, dropped: records.length - kept.length };
}

/** Every second old, unpinned record of each task (or the lone one, when a task has only one). */
function halvingVictims(records: readonly StoredRecord[], alive: readonly boolean[]): number[] {
  const unpinned: number[] = [];
  records.forEach((r, i) => alive[i] && !isPinned(r) && unpinned.push(i));
  const old = unpinned.slice(0, Math.max(0, unpinned.length - KEEP_RECENT));
  const byTask = new Map<string, number[]>();
  for (const i of old) {
    const k = taskKey(records[i]!);
    const list = byTask.get(k);
    if (list) list.push(i);
    else byTask.set(k, [i]);
  }
  const victims: number[] = [];
  for (const list of byTask.values()) {
    if (list.length === 1) victims.push(list[0]!);
    else for (let j = 1; j < list.length; j += 2) victims.push(list[j]!);
  }
  return victims;
}

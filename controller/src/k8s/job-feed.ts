/**
 * Keeps the runtime's job list in step with the OptimusJobs in the cluster: new valid jobs are
 * submitted, deleted ones removed; a job the runtime rejects gets an `Invalid` condition.
 */
import type { JobSpec } from '../runtime/job-spec';
import { jobIdOf, parseJobSpec } from '../runtime/job-spec';
import type { JobEntry } from './job-source';
import { isFinished } from './job-source';
import { toJobSpecInput } from './runtime-backend';

/** The part of the runtime's controller the feed drives. */
export interface JobSink {
  submit(spec: JobSpec): Promise<unknown>;
  remove(id: string): Promise<void>;
  records(): readonly { readonly spec: JobSpec }[];
}

export interface FeedResult {
  readonly submitted: string[];
  readonly removed: string[];
  readonly rejected: { id: string; error: string }[];
}

/** One reconciliation pass over `entries` (all OptimusJobs the informer holds). */
export async function syncJobs(sink: JobSink, entries: readonly JobEntry[]): Promise<FeedResult> {
  const known = new Set(sink.records().map((r) => jobIdOf(r.spec)));
  const present = new Set(entries.map((e) => e.id));
  const result: FeedResult = { submitted: [], removed: [], rejected: [] };
  for (const e of entries) {
    if (known.has(e.id) || isFinished(e.job)) continue;
    if (!e.valid) {
      result.rejected.push({ id: e.id, error: e.error });
      continue;
    }
    const parsed = parseJobSpec(toJobSpecInput(e));
    if (!parsed.ok) {
      result.rejected.push({ id: e.id, error: parsed.error });
      continue;
    }
    await sink.submit(parsed.spec);
    result.submitted.push(e.id);
  }
  for (const id of known) {
    if (present.has(id)) continue;
    await sink.remove(id);
    result.removed.push(id);
  }
  return result;
}

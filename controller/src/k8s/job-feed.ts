/**
 * Keeps the runtime's job list in step with the OptimusJobs in the cluster: new valid jobs are
 * submitted, deleted ones removed; a job the runtime rejects gets an `Invalid` condition.
 */
import type { Resources } from '../../../shared/src/units';
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
  /** Submits or removals that threw (API errors): retried on the next pass, never marked Invalid. */
  readonly failed: { id: string; error: string }[];
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One reconciliation pass over `entries` (all OptimusJobs the informer holds). */
export async function syncJobs(
  sink: JobSink,
  entries: readonly JobEntry[],
  /** Requests every PS/worker pod carries beyond the job's own (the injected sidecar). */
  podOverhead: Resources = {},
): Promise<FeedResult> {
  const known = new Set(sink.records().map((r) => jobIdOf(r.spec)));
  const present = new Set(entries.map((e) => e.id));
  const result: FeedResult = { submitted: [], removed: [], rejected: [], failed: [] };
  for (const e of entries) {
    if (known.has(e.id) || isFinished(e.job)) continue;
    if (!e.valid) {
      result.rejected.push({ id: e.id, error: e.error });
      continue;
    }
    const parsed = parseJobSpec(toJobSpecInput(e, podOverhead));
    if (!parsed.ok) {
      result.rejected.push({ id: e.id, error: parsed.error });
      continue;
    }
    // One job's failure must not keep the jobs after it out of the runtime.
    try {
      await sink.submit(parsed.spec);
      result.submitted.push(e.id);
    } catch (err) {
      result.failed.push({ id: e.id, error: messageOf(err) });
    }
  }
  for (const id of known) {
    if (present.has(id)) continue;
    try {
      await sink.remove(id);
      result.removed.push(id);
    } catch (err) {
      result.failed.push({ id, error: messageOf(err) });
    }
  }
  return result;
}

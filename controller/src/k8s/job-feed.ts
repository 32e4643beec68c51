/**
 * Keeps the runtime's job list in step with the OptimusJobs in the cluster: new valid jobs are
 * submitted, deleted ones removed; a job the runtime rejects gets an `Invalid` condition, and a
 * job whose name cannot work (see {@link jobNameProblem}) also the phase `Failed`.
 */
import type { Resources } from '../../../shared/src/units';
import type { JobSpec } from '../runtime/job-spec';
import { jobIdOf, parseJobSpec } from '../runtime/job-spec';
import { CONDITION, setCondition } from './api/conditions';
import type { JobApi, StatusChange } from './api/job-api';
import type { JobEntry } from './observe/job-source';
import { currentOf, isFinished } from './observe/job-source';
import { jobNameProblem, splitJobId } from './api/names';
import type { OptimusJob } from './api/optimus-job';
import { toJobSpecInput } from './runtime-backend';
import type { AdmissionProblem } from './api/job-admission';

/** The part of the runtime's controller the feed drives. */
export interface JobSink {
  submit(spec: JobSpec): Promise<unknown>;
  remove(id: string): Promise<void>;
  records(): readonly { readonly spec: JobSpec }[];
}

/**
 * Why a job was refused. `InvalidName` and `ControllerNamespace` are final (neither a name nor a
 * namespace can be edited; the CRD's CEL rules refuse such names, but not on a cluster without CEL or
 * for jobs created before the rule); `InvalidSpec` and `PodSecurity` are retried when the spec changes,
 * `NamespaceNotEnabled` when the namespace is enabled.
 */
export const REJECT_REASONS = [
  'InvalidName',
  'InvalidSpec',
  'PodSecurity',
  'ControllerNamespace',
  'NamespaceNotEnabled',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface Rejection {
  readonly id: string;
  readonly error: string;
  readonly reason: RejectReason;
}

export interface FeedResult {
  readonly submitted: string[];
  readonly removed: string[];
  readonly rejected: Rejection[];
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
  /** Whether the controller may run the job at all (its namespace, its pods' security). */
  admission: (e: Extract<JobEntry, { valid: true }>) => AdmissionProblem | null = () => null,
): Promise<FeedResult> {
  const known = new Set(sink.records().map((r) => jobIdOf(r.spec)));
  const present = new Set(entries.map((e) => e.id));
  const result: FeedResult = { submitted: [], removed: [], rejected: [], failed: [] };
  for (const e of entries) {
    if (known.has(e.id) || isFinished(e.job)) continue;
    // Checked before anything runs: a job already holding pods (started by an older controller)
    // is resumed as it is, never failed under its running pods.
    const nameProblem = currentOf(e.job) ? null : jobNameProblem(e.job.metadata.name);
    if (nameProblem) {
      result.rejected.push({ id: e.id, error: nameProblem, reason: 'InvalidName' });
      continue;
    }
    if (!e.valid) {
      result.rejected.push({ id: e.id, error: e.error, reason: 'InvalidSpec' });
      continue;
    }
    // Also for a job that already holds pods (an earlier version started it): it is not resized
    // with templates the controller will no longer build.
    const problem = admission(e);
    if (problem) {
      result.rejected.push({ id: e.id, error: problem.error, reason: problem.reason });
      continue;
    }
    const parsed = parseJobSpec(toJobSpecInput(e, podOverhead));
    if (!parsed.ok) {
      result.rejected.push({ id: e.id, error: parsed.error, reason: 'InvalidSpec' });
      continue;
    }
    // One job's failure must not keep the jobs after it out of the runtime.
    try {
      await sink.submit(parsed.spec);
      result.submitted.push(e.id);
    } catch (err) {
      // 422: a task larger than every node; retrying cannot help until the spec (or the cluster) changes.
      if ((err as { status?: unknown }).status === 422)
        result.rejected.push({ id: e.id, error: messageOf(err), reason: 'InvalidSpec' });
      else result.failed.push({ id: e.id, error: messageOf(err) });
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

/**
 * The status that says why a job was refused: an `Invalid` condition naming the problem, and for
 * a name that can never work also the phase `Failed`. Empty when the status already says so
 * (the feed meets a refused spec on every pass).
 */
export function rejectionStatus(job: OptimusJob, r: Rejection, nowIso: string): StatusChange {
  const s = job.status;
  const said = s?.conditions?.some(
    (c) =>
      c.type === CONDITION.Invalid && c.status === 'True' && c.reason === r.reason && c.message === r.error,
  );
  const final = r.reason === 'InvalidName' || r.reason === 'ControllerNamespace';
  if (said && (!final || s?.phase === 'Failed')) return {};
  return {
    ...(final ? { phase: 'Failed' as const } : {}),
    conditions: setCondition(
      s?.conditions,
      { type: CONDITION.Invalid, status: 'True', reason: r.reason, message: r.error },
      nowIso,
    ),
  };
}

/** Writes {@link rejectionStatus} into the job's status (leader only, like every status write). */
export async function markRejected(
  jobs: Pick<JobApi, 'updateStatus'>,
  r: Rejection,
  nowIso: string,
): Promise<void> {
  const parts = splitJobId(r.id);
  if (!parts) return;
  await jobs.updateStatus(parts.namespace, parts.name, (j) => rejectionStatus(j, r, nowIso));
}

/**
 * A job refused earlier and admitted now (its spec was fixed, its namespace enabled) no longer says
 * it is invalid. Nothing to write when it never was.
 */
export async function clearRejection(
  jobs: Pick<JobApi, 'updateStatus'>,
  id: string,
  nowIso: string,
): Promise<void> {
  const parts = splitJobId(id);
  if (!parts) return;
  await jobs.updateStatus(parts.namespace, parts.name, (j) => {
    const invalid = j.status?.conditions?.some((c) => c.type === CONDITION.Invalid && c.status === 'True');
    if (!invalid) return {};
    return {
      conditions: setCondition(
        j.status?.conditions,
        {
          type: CONDITION.Invalid,
          status: 'False',
          reason: 'Admitted',
          message: 'the job now runs under Optimus',
        },
        nowIso,
      ),
    };
  });
}

/**
 * The runtime's StateStore kept in the cluster, so a controller that moves to another node, or a
 * second replica that takes the lease over, resumes every job with its observations.
 *
 * Per OptimusJob, one ConfigMap `<job>-observations` owned by the job (deleted with it):
 * - `job.json`: `{ v, originMs, decisions, record }` — the runtime's job record (phase, spans,
 *   restarts, pre-run progress) and the runtime clock's origin its times are relative to;
 * - `records.jsonl`: the accepted metrics records, one JSON line each, bounded by
 *   {@link thinToBudget} (epoch lines kept, old batch lines halved).
 *
 * Writes are batched: records and documents only mark a job dirty, and a flush every `flushMs`
 * writes each dirty job's ConfigMap once (replace with the resourceVersion last seen; a 409 means
 * another writer, re-read and retry while still the leader). A controller killed between flushes
 * loses at most `flushMs` of observations, which the models only miss as samples — unlike the
 * local FileStore, acknowledgement is not durable per record. The decision counter is written
 * along with job changes only, so after a restart it may lag by the rounds that changed nothing.
 *
 * A job's target (ADR 0035) is the exception: a document with a newer target generation than the
 * job's ConfigMap holds is written through before `saveDocument` resolves (and rejects if it could
 * not be), because the runtime steps toward a target only once it is durable — a controller that
 * dies after a step then reads back the target its pods were started for, never an older one.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { metricsRecordSchema } from '../../../../shared/src/schemas';
import { taskIdSchema } from '../../../../shared/src/topics';
import type { RuntimeDocument, StateStore, StoredRecord } from '../../runtime/backend';
import type { JobRecord } from '../../runtime/job-record';
import { JOB_PHASES } from '../../runtime/job-record';
import { parseJobSpec } from '../../runtime/job-spec';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';
import { JobApi } from '../api/job-api';
import { LABEL_JOB } from '../api/names';
import { thinToBudget } from './observation-budget';
import type { OptimusJob } from '../api/optimus-job';
import { ownerReferenceOf } from '../rollout/pod-builder';

export const KEY_JOB = 'job.json' as const;
export const KEY_RECORDS = 'records.jsonl' as const;
/** Bytes of records kept per job: half a ConfigMap's 1 MiB, leaving room for the job record. */
export const MAX_RECORD_BYTES = 512 * 1024;
export const configMapNameOf = (job: string): string => `${job}-observations`;

/** A record's target generation (0 without a target, or with one a hand edit broke). */
const generationOf = (rec: JobRecord): number => {
  const g = (rec.target as { generation?: unknown } | null | undefined)?.generation;
  return typeof g === 'number' ? g : 0;
};

export interface ClusterStoreOptions {
  readonly clients: KubeClients;
  /** The OptimusJobs the informer holds: state is loaded and kept only for these. */
  readonly jobs: () => readonly { readonly id: string; readonly job: OptimusJob }[];
  /** Writes only while this holds (a replica that lost the lease stops writing at once). */
  readonly isLeader?: () => boolean;
  readonly flushMs?: number;
  readonly maxRecordBytes?: number;
  readonly onError?: (err: unknown) => void;
}

interface JobState {
  records: StoredRecord[];
  /** The job record as last saved by the runtime (JSON), null until the first save. */
  record: string | null;
  dirty: boolean;
  resourceVersion: string | undefined;
  /** The target generation in `record`, and the one last written to the ConfigMap. */
  generation: number;
  writtenGeneration: number;
}

export class ClusterStore implements StateStore {
  private readonly state = new Map<string, JobState>();
  private readonly jobApi: JobApi;
  private meta = { originMs: 0, decisions: 0 };
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Records appended so far, and how many of them a complete flush has written (ADR 0012). */
  private appended = 0;
  private writtenThrough = 0;
  /** ConfigMap writes made, and records dropped by the budget (for tests and logs). */
  readonly stats = { writes: 0, dropped: 0 };

  constructor(private readonly o: ClusterStoreOptions) {
    this.jobApi = new JobApi(o.clients);
  }

  async load(): Promise<{ doc: RuntimeDocument | null; records: StoredRecord[] }> {
    const jobs: JobRecord[] = [];
    const records: StoredRecord[] = [];
    let origin: number | null = null;
    for (const { id, job } of this.o.jobs()) {
      const loaded = await this.loadJob(job).catch((err: unknown) => {
        this.o.onError?.(err);
        return null;
      });
      if (!loaded) continue;
      jobs.push(loaded.record);
      records.push(...loaded.records);
      origin = origin === null ? loaded.originMs : Math.min(origin, loaded.originMs);
      this.meta.decisions = Math.max(this.meta.decisions, loaded.decisions);
      this.state.set(id, {
        records: loaded.records,
        record: JSON.stringify(loaded.record),
        dirty: false,
        resourceVersion: loaded.resourceVersion,
        // What the ConfigMap holds is durable: the target read back is the one steps go on toward.
        generation: generationOf(loaded.record),
        writtenGeneration: generationOf(loaded.record),
      });
    }
    if (origin === null) return { doc: null, records: [] };
    this.meta.originMs = origin;
    return { doc: { v: 1, originMs: origin, decisions: this.meta.decisions, jobs }, records };
  }

  appendRecord(r: StoredRecord): void {
    this.appended += 1;
    const s = this.stateOf(`${r.task.namespace}/${r.task.job}`);
    s.records.push(r);
    s.dirty = true;
    this.schedule();
  }

  async saveDocument(doc: RuntimeDocument): Promise<void> {
    this.meta = { originMs: doc.originMs, decisions: doc.decisions };
    const ids = new Set<string>();
    const newTargets: string[] = [];
    for (const rec of doc.jobs) {
      const id = `${rec.spec.namespace}/${rec.spec.name}`;
      ids.add(id);
      const s = this.stateOf(id);
      const json = JSON.stringify(rec);
      if (s.record !== json) [s.record, s.dirty] = [json, true];
      s.generation = generationOf(rec);
      if (s.generation > s.writtenGeneration) newTargets.push(id);
    }
    // A job the runtime forgot: stop writing it (its ConfigMap goes with the OptimusJob).
    for (const id of this.state.keys()) if (!ids.has(id)) this.state.delete(id);
    if (newTargets.length === 0) {
      this.schedule();
      return;
    }
    await this.flush();
    const unwritten = newTargets.filter((id) => {
      const s = this.state.get(id);
      return s !== undefined && s.generation > s.writtenGeneration;
    });
    if (unwritten.length > 0) {
      this.schedule();
      throw new Error(`the targets of ${unwritten.join(', ')} are not in their ConfigMaps yet`);
    }
  }

  /**
   * True once every record appended before the call is in its ConfigMap: a flush now, which must
   * write everything dirty (ADR 0012: the sidecars forget records only after this).
   */
  async durable(): Promise<boolean> {
    const target = this.appended;
    await this.flush();
    return this.writtenThrough >= target;
  }

  /** Writes every dirty job now (after any flush in flight). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(() => this.writeDirty());
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private stateOf(id: string): JobState {
    let s = this.state.get(id);
    if (!s)
      this.state.set(
        id,
        (s = {
          records: [],
          record: null,
          dirty: false,
          resourceVersion: undefined,
          generation: 0,
          writtenGeneration: 0,
        }),
      );
    return s;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.o.flushMs ?? 5000);
  }

  private async writeDirty(): Promise<void> {
    if (this.o.isLeader && !this.o.isLeader()) return;
    const target = this.appended;
    let complete = true;
    const owners = new Map(this.o.jobs().map((e) => [e.id, e.job]));
    for (const [id, s] of this.state) {
      if (!s.dirty) continue;
      // Not in the informer (deleted, or a relist in progress): nothing to own the ConfigMap now.
      // The state stays until the runtime forgets the job (saveDocument), then goes with it.
      const job = owners.get(id);
      if (!job || s.record === null) {
        complete = false;
        continue;
      }
      const thinned = thinToBudget(s.records, this.o.maxRecordBytes ?? MAX_RECORD_BYTES);
      this.stats.dropped += thinned.dropped;
      s.records = thinned.kept;
      s.dirty = false;
      const generation = s.generation;
      try {
        await this.write(job, s);
        s.writtenGeneration = Math.max(s.writtenGeneration, generation);
        this.stats.writes += 1;
      } catch (err) {
        s.dirty = true; // the next flush tries again
        complete = false;
        this.o.onError?.(err);
      }
    }
    if (complete) this.writtenThrough = Math.max(this.writtenThrough, target);
  }

  private async write(job: OptimusJob, s: JobState): Promise<void> {
    const { namespace, name } = job.metadata;
    const cmName = configMapNameOf(name);
    const body = (): V1ConfigMap => ({
      metadata: {
        name: cmName,
        namespace,
        labels: { [LABEL_JOB]: name },
        ownerReferences: [ownerReferenceOf(job)],
        ...(s.resourceVersion ? { resourceVersion: s.resourceVersion } : {}),
      },
      data: {
        [KEY_JOB]: `{"v":1,"originMs":${this.meta.originMs},"decisions":${this.meta.decisions},"record":${s.record}}`,
        [KEY_RECORDS]: s.records.map((r) => `${JSON.stringify(r)}\n`).join(''),
      },
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const written = s.resourceVersion
          ? await this.o.clients.core.replaceNamespacedConfigMap({ namespace, name: cmName, body: body() })
          : await this.create(job, body());
        s.resourceVersion = written.metadata?.resourceVersion;
        return;
      } catch (err) {
        const code = statusCodeOf(err);
        if (attempt >= 3 || (code !== 409 && code !== 404)) throw err;
        if (this.o.isLeader && !this.o.isLeader()) throw err;
        s.resourceVersion = await this.currentVersion(namespace, cmName);
      }
    }
  }

  private async create(job: OptimusJob, body: V1ConfigMap): Promise<V1ConfigMap> {
    const { namespace, name } = job.metadata;
    const created = await this.o.clients.core.createNamespacedConfigMap({ namespace, body });
    // For humans (`kubectl get optimusjob -o yaml`): where the job's observations are.
    await this.jobApi
      .updateStatus(namespace, name, (j) =>
        j.status?.observationsConfigMap === body.metadata?.name
          ? {}
          : { observationsConfigMap: body.metadata?.name ?? null },
      )
      .catch((err: unknown) => this.o.onError?.(err));
    return created;
  }

  /** The ConfigMap's resourceVersion now, or undefined when it does not exist. */
  private async currentVersion(namespace: string, name: string): Promise<string | undefined> {
    try {
      return (await this.o.clients.core.readNamespacedConfigMap({ namespace, name })).metadata
        ?.resourceVersion;
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw err;
    }
  }

  private async loadJob(job: OptimusJob): Promise<LoadedJob | null> {
    const { namespace, name } = job.metadata;
    let cm: V1ConfigMap;
    try {
      cm = await this.o.clients.core.readNamespacedConfigMap({ namespace, name: configMapNameOf(name) });
    } catch (err) {
      if (statusCodeOf(err) === 404) return null;
      throw err;
    }
    const parsed = parseJobDocument(cm.data?.[KEY_JOB], `${namespace}/${name}`);
    if (!parsed.ok) {
      this.o.onError?.(new Error(`ConfigMap ${namespace}/${configMapNameOf(name)}: ${parsed.error}`));
      return null;
    }
    return {
      ...parsed.value,
      records: parseRecords(cm.data?.[KEY_RECORDS] ?? '', namespace, name),
      resourceVersion: cm.metadata?.resourceVersion,
    };
  }
}

interface LoadedJob {
  readonly originMs: number;
  readonly decisions: number;
  readonly record: JobRecord;
  readonly records: StoredRecord[];
  readonly resourceVersion: string | undefined;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** `job.json`, checked enough that a hand-edited or foreign ConfigMap cannot crash the runtime. */
export function parseJobDocument(
  text: string | undefined,
  id: string,
): Parsed<{ originMs: number; decisions: number; record: JobRecord }> {
  let v: unknown;
  try {
    v = JSON.parse(text ?? '');
  } catch {
    return { ok: false, error: `${KEY_JOB} is missing or not JSON` };
  }
  const d = v as { v?: unknown; originMs?: unknown; decisions?: unknown; record?: Partial<JobRecord> };
  if (d?.v !== 1 || typeof d.originMs !== 'number' || typeof d.record !== 'object' || d.record === null)
    return { ok: false, error: `${KEY_JOB} is not a v1 job document` };
  const rec = d.record;
  const spec = parseJobSpec(rec.spec);
  if (!spec.ok) return { ok: false, error: `${KEY_JOB}: record.spec.${spec.error}` };
  if (`${spec.spec.namespace}/${spec.spec.name}` !== id)
    return { ok: false, error: `${KEY_JOB} belongs to another job` };
  const phaseOk = (JOB_PHASES as readonly unknown[]).includes(rec.phase);
  if (!phaseOk || !Array.isArray(rec.spans) || typeof rec.submittedAt !== 'number')
    return { ok: false, error: `${KEY_JOB}: record has no valid phase, spans or submittedAt` };
  const decisions = typeof d.decisions === 'number' ? d.decisions : 0;
  return {
    ok: true,
    value: { originMs: d.originMs, decisions, record: { ...rec, spec: spec.spec } as JobRecord },
  };
}

/** `records.jsonl`; lines that are not a valid record of this job are skipped. */
export function parseRecords(text: string, namespace: string, job: string): StoredRecord[] {
  const out: StoredRecord[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const v = JSON.parse(line) as { task?: unknown; record?: unknown };
      const task = taskIdSchema.safeParse(v.task);
      const record = metricsRecordSchema.safeParse(v.record);
      if (task.success && record.success && task.data.namespace === namespace && task.data.job === job)
        out.push({ task: task.data, record: record.data });
    } catch {
      // a torn or edited line: skipped
    }
  }
  return out;
}

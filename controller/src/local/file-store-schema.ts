/**
 * What the local store reads back, checked (ADR 0032): `state.json` and each line of
 * `records.jsonl`. A hand-edited, foreign or damaged file gets an error naming the file, the field
 * and what to do, never a TypeError from deep inside the runtime.
 */
import { z } from 'zod';
import { metricsRecordSchema } from '../../../shared/src/schemas';
import { taskIdSchema } from '../../../shared/src/topics';
import type { RuntimeDocument, StoredRecord } from '../runtime/backend';
import { JOB_PHASES } from '../runtime/job-record';
import { jobSpecSchema } from '../runtime/job-spec';

const count = z.number().int().min(0);
const shape = z.object({ ps: count, workers: count });

// Loose objects: a field this schema does not name (added later) is kept, not stripped.
const jobRecordSchema = z.looseObject({
  spec: jobSpecSchema,
  incarnation: z.string().optional(),
  submittedAt: z.number().finite(),
  finishedAt: z.number().finite().nullable(),
  phase: z.enum(JOB_PHASES),
  reason: z.string().nullable(),
  end: z
    .object({ outcome: z.enum(['succeeded', 'failed']), reason: z.string(), message: z.string() })
    .nullable()
    .optional(),
  degraded: z
    .object({ stage: z.enum(['refit', 'plan', 'rollout']), reason: z.string(), sinceMs: z.number() })
    .nullable()
    .optional(),
  restarts: count,
  spans: z.array(
    z.looseObject({
      shape,
      since: z.number().finite(),
      until: z.number().finite().nullable(),
      fitted: z.boolean(),
    }),
  ),
  preRun: z.object({ shapes: z.array(shape), done: count }).nullable(),
});

const documentSchema = z.looseObject({
  v: z.literal(1),
  originMs: z.number().finite(),
  decisions: count,
  jobs: z.array(jobRecordSchema),
  /** Written by the store: records in `records.jsonl` when the document was saved (absent in old files). */
  storedRecords: count.optional(),
});

export const storedRecordSchema = z
  .object({ task: taskIdSchema, record: metricsRecordSchema, incarnation: z.string().optional() })
  .strict();

/** `state.json` is not a state document; the message names the file, the field and the way out. */
export class StateFileError extends Error {
  override readonly name = 'StateFileError';
  constructor(
    readonly file: string,
    problem: string,
    recovery: string,
  ) {
    super(`${file} is not a valid Optimus state file (${problem}). ${recovery}`);
  }
}

export interface ParsedDocument {
  readonly doc: RuntimeDocument;
  /** Records the log held when the document was saved; null for documents written before it was kept. */
  readonly storedRecords: number | null;
}

/** Parses `state.json`'s text or throws {@link StateFileError}. */
export function parseStateDocument(text: string, file: string, recovery: string): ParsedDocument {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new StateFileError(file, `not JSON: ${(err as Error).message}`, recovery);
  }
  const r = documentSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'document';
    throw new StateFileError(file, `${where}: ${issue?.message ?? 'invalid'}`, recovery);
  }
  const { storedRecords, ...doc } = r.data;
  return {
    // The runtime normalises each record (`normalizeRecord`): fields added since get their defaults.
    doc: doc as RuntimeDocument,
    storedRecords: storedRecords ?? null,
  };
}

/** One line of `records.jsonl`: the record, or why it is not one. */
export function parseRecordLine(
  line: string,
): { ok: true; value: StoredRecord } | { ok: false; reason: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const r = storedRecordSchema.safeParse(raw);
  if (r.success) return { ok: true, value: r.data as StoredRecord };
  const issue = r.error.issues[0];
  return { ok: false, reason: `${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'invalid'}` };
}

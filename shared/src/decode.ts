/**
 * Decoding of wire payloads: bytes → JSON → schema. Never throws; a failure carries a
 * short machine-readable reason so receivers can count rejections by reason.
 */
import type { z } from 'zod';
import { metricsBatchSchema, metricsRecordSchema, type MetricsRecord } from './schemas';

export type RejectReason =
  | 'not-utf8'
  | 'not-json'
  | 'schema'
  | 'out-of-range'
  | 'unknown-topic'
  | 'unknown-job'
  | 'too-large'
  | 'duplicate';
export type Rejection = { ok: false; reason: RejectReason; detail: string; field?: string };
export type Decoded<T> = { ok: true; value: T } | Rejection;

export const MAX_PAYLOAD_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes → JSON value; the size is checked before anything is parsed. */
export function decodeJson(payload: Uint8Array | string): Decoded<unknown> {
  const size = typeof payload === 'string' ? payload.length : payload.byteLength;
  if (size > MAX_PAYLOAD_BYTES) return { ok: false, reason: 'too-large', detail: `${size} bytes` };
  let text: string;
  try {
    text = typeof payload === 'string' ? payload : utf8.decode(payload);
  } catch {
    return { ok: false, reason: 'not-utf8', detail: 'payload is not valid UTF-8' };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, reason: 'not-json', detail: (e as Error).message };
  }
}

/** Checks a JSON value against a schema; a bounds violation is `out-of-range`, naming the field. */
export function decodeValue<S extends z.ZodType>(schema: S, json: unknown): Decoded<z.infer<S>> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues;
  // Any shape problem makes the value unusable; only a record whose shape is right and whose
  // figures are impossible counts as out of range.
  const shape = issues.find((i) => !isBoundsIssue(i));
  const first = shape ?? issues[0];
  const path = first?.path.join('.') ?? '';
  const detail = first ? `${path}: ${first.message}` : 'invalid';
  if (shape !== undefined || first === undefined) return { ok: false, reason: 'schema', detail };
  return { ok: false, reason: 'out-of-range', detail, field: String(first.path[0] ?? '') };
}

export function decodePayload<S extends z.ZodType>(
  schema: S,
  payload: Uint8Array | string,
): Decoded<z.infer<S>> {
  const json = decodeJson(payload);
  return json.ok ? decodeValue(schema, json.value) : json;
}

/**
 * A `.../metrics` payload in either wire version: v1 is one record, v2 a batch of records. Each
 * record of a batch is checked on its own: the good ones are delivered, the bad ones counted.
 */
export type DecodedMetrics = { ok: true; records: Decoded<MetricsRecord>[] } | Rejection;

export function decodeMetricsPayload(payload: Uint8Array | string): DecodedMetrics {
  const json = decodeJson(payload);
  if (!json.ok) return json;
  const v = (json.value as { v?: unknown } | null)?.v;
  if (v === 2) {
    const batch = decodeValue(metricsBatchSchema, json.value);
    if (!batch.ok) return batch;
    return { ok: true, records: batch.value.records.map((r) => decodeValue(metricsRecordSchema, r)) };
  }
  return { ok: true, records: [decodeValue(metricsRecordSchema, json.value)] };
}

type Issue = z.ZodError['issues'][number];

/** A figure (or name, or metric count) beyond its physical bound; not a malformed envelope. */
function isBoundsIssue(i: Issue): boolean {
  if (i.code === 'too_big' || i.code === 'too_small') return i.origin !== 'array';
  // Custom checks flagged with `OUT_OF_RANGE` (schemas.ts) are bounds checks too.
  return i.code === 'custom' && (i.params as { outOfRange?: unknown } | undefined)?.outOfRange === true;
}

/** Counts rejections by reason; receivers expose it as metrics. */
export class RejectCounter {
  private readonly counts = new Map<RejectReason, number>();
  add(reason: RejectReason): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  }
  get(reason: RejectReason): number {
    return this.counts.get(reason) ?? 0;
  }
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
  snapshot(): Partial<Record<RejectReason, number>> {
    return Object.fromEntries(this.counts);
  }
}

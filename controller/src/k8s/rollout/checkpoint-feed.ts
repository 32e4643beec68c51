/** Picks checkpoint reports out of the telemetry stream (the sidecar's `checkpoint` records). */
import { decodeMetricsPayload } from '../../../../shared/src/decode';
import { jobKey, parseTopic } from '../../../../shared/src/topics';

/**
 * The job and time of every checkpoint record of a metrics message, in either wire version (v1: one
 * record, v2: a batch — what the sidecar sends); nothing for anything else (the runtime's ingest
 * counts what is invalid).
 */
export function checkpointsFromMessage(
  topic: string,
  payload: Uint8Array | string,
): { jobId: string; atMs: number }[] {
  const t = parseTopic(topic);
  if (t?.kind !== 'metrics') return [];
  const d = decodeMetricsPayload(payload);
  if (!d.ok) return [];
  return d.records.flatMap((r) =>
    r.ok && r.value.kind === 'checkpoint' ? [{ jobId: jobKey(t.task), atMs: r.value.ts }] : [],
  );
}

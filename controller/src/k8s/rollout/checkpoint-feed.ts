/** Picks checkpoint reports out of the telemetry stream (the sidecar's `checkpoint` records). */
import { decodePayload } from '../../../../shared/src/decode';
import { metricsRecordSchema } from '../../../../shared/src/schemas';
import { jobKey, parseTopic } from '../../../../shared/src/topics';

/** The job and time of a checkpoint record, or null for anything else (left to the runtime's ingest). */
export function checkpointFromMessage(
  topic: string,
  payload: Uint8Array | string,
): { jobId: string; atMs: number } | null {
  const t = parseTopic(topic);
  if (t?.kind !== 'metrics') return null;
  const d = decodePayload(metricsRecordSchema, payload);
  if (!d.ok || d.value.kind !== 'checkpoint') return null;
  return { jobId: jobKey(t.task), atMs: d.value.ts };
}

/**
 * Decoding of wire payloads: bytes → JSON → schema. Never throws; a failure carries a
 * short machine-readable reason so receivers can count rejections by reason.
 */
import type { z } from 'zod';

export type RejectReason = 'not-utf8' | 'not-json' | 'schema' | 'unknown-topic' | 'too-large' | 'duplicate';
export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: RejectReason; detail: string };

export const MAX_PAYLOAD_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodePayload<S extends z.ZodType>(
  schema: S,
  payload: Uint8Array | string,
): Decoded<z.infer<S>> {
  const size = typeof payload === 'string' ? payload.length : payload.byteLength;
  if (size > MAX_PAYLOAD_BYTES) return { ok: false, reason: 'too-large', detail: `${size} bytes` };
  let text: string;
  try {
    text = typeof payload === 'string' ? payload : utf8.decode(payload);
  } catch {
    return { ok: false, reason: 'not-utf8', detail: 'payload is not valid UTF-8' };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: 'not-json', detail: (e as Error).message };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return {
      ok: false,
      reason: 'schema',
      detail: first ? `${first.path.join('.')}: ${first.message}` : 'invalid',
    };
  }
  return { ok: true, value: parsed.data };
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

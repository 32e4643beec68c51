/**
 * The two retained messages the sidecar follows (ADR 0012), checked by hand: zod is not in the bundle,
 * and anything malformed is ignored (a watermark only ever lets records go, so a bad one must not).
 */

/** `{ v: 1, from, through, ts }` from `…/stored`; null when malformed or cleared (empty). */
export function parseWatermark(payload: Buffer): { from: number; through: number } | null {
  const w = parseObject(payload);
  if (w === null || w['v'] !== 1) return null;
  const { from, through } = w;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(through)) return null;
  if ((from as number) < 0 || (from as number) > (through as number)) return null;
  return { from: from as number, through: through as number };
}

/** The controller's retained status: online or not, and when it said so (its restarts differ in `ts`). */
export function parseControllerStatus(payload: Buffer): { online: boolean; ts: number } | null {
  const s = parseObject(payload);
  if (s === null || s['v'] !== 1 || typeof s['ts'] !== 'number') return null;
  if (s['state'] !== 'online' && s['state'] !== 'offline') return null;
  return { online: s['state'] === 'online', ts: s['ts'] };
}

function parseObject(payload: Buffer): Record<string, unknown> | null {
  if (payload.length === 0 || payload.length > 4096) return null;
  try {
    const v: unknown = JSON.parse(payload.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

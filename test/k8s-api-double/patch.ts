/**
 * Patch bodies by content type. Strategic merge is treated as a JSON merge patch (RFC 7386):
 * acceptable for what our controller sends (maps and whole-list replacement), NOT for patches that
 * rely on strategic list merging by key (e.g. adding one container by name) — the double would
 * replace the list instead. Server-side apply is not supported (415).
 */
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { StoreError } from './store';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export const PATCH_TYPES = [
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
] as const;

export function applyPatch(current: unknown, body: unknown, contentType: string): unknown {
  const type = contentType.split(';')[0]?.trim() ?? '';
  if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
    if (!isPlainObject(body))
      throw new StoreError(400, 'BadRequest', 'merge patch body must be a JSON object');
    return mergePatch(current, body);
  }
  if (type === 'application/json-patch+json') {
    if (!Array.isArray(body)) throw new StoreError(400, 'BadRequest', 'json patch body must be a JSON array');
    try {
      return fastJsonPatch.applyPatch(structuredClone(current), body as Operation[], true, false).newDocument;
    } catch (err) {
      throw new StoreError(422, 'Invalid', `the json patch could not be applied: ${(err as Error).message}`);
    }
  }
  throw new StoreError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
  );
}

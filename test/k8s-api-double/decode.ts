/**
 * What the API server's JSON decoder refuses before any validation (400 BadRequest), where a
 * client library can get it wrong: `MicroTime` fields need exactly six fractional digits
 * (`RFC3339Micro`, Go layout "2006-01-02T15:04:05.000000Z07:00"); client-node sends a plain
 * `Date` with three, which a real server answers with
 * `parsing time "…:02.130Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`.
 */
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/** MicroTime field paths of each kind (apiVersion/kind). */
const MICRO_TIME_FIELDS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'coordination.k8s.io/v1/Lease': [
    ['spec', 'acquireTime'],
    ['spec', 'renewTime'],
  ],
  'events.k8s.io/v1/Event': [['eventTime'], ['series', 'lastObservedTime']],
  'v1/Event': [['eventTime'], ['series', 'lastObservedTime']],
};

const at = (obj: unknown, path: readonly string[]): unknown =>
  path.reduce<unknown>(
    (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
    obj,
  );

/** The decoder's error for `obj`, or null when it decodes. */
export function decodeError(key: string, obj: unknown): string | null {
  for (const path of MICRO_TIME_FIELDS[key] ?? []) {
    const v = at(obj, path);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || !MICRO_TIME.test(v))
      return (
        `${path.join('.')}: parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05.000000Z07:00": ` +
        'cannot parse as RFC 3339 with microseconds'
      );
  }
  return null;
}

/**
 * A small JSON Schema (2020-12 subset) checker for the JSON Schemas that zod generates from the
 * shared wire schemas. The bundle carries these instead of zod itself: zod costs ~12 MB of resident
 * memory per process, more than the sidecar may use in total. Unknown keywords are refused at compile
 * time, so a shared schema that grows a feature fails the build instead of being checked loosely.
 */

export interface JsonSchema {
  [keyword: string]: unknown;
}

/** Returns null when `value` conforms, else a short reason with its JSON path. */
export type Validator = (value: unknown) => string | null;

const KNOWN = new Set([
  '$schema',
  'type',
  'const',
  'enum',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'anyOf',
  'description',
]);

const typeOf = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number')
    return Number.isInteger(v) ? 'integer' : Number.isFinite(v) ? 'number' : 'non-finite';
  return typeof v;
};

const typeMatches = (want: string, v: unknown): boolean => {
  const t = typeOf(v);
  return want === t || (want === 'number' && t === 'integer');
};

/** Compiles `schema` into a validator; throws on keywords this subset does not implement. */
export function compileValidator(schema: JsonSchema): Validator {
  for (const k of Object.keys(schema))
    if (!KNOWN.has(k)) throw new Error(`unsupported JSON Schema keyword: ${k}`);
  const checks: ((v: unknown, at: string) => string | null)[] = [];
  const s = schema;
  if (s['type'] !== undefined) {
    const types = ([] as string[]).concat(s['type'] as string | string[]);
    checks.push((v, at) =>
      types.some((t) => typeMatches(t, v)) ? null : `${at}: expected ${types.join('|')}`,
    );
  }
  if ('const' in s)
    checks.push((v, at) => (v === s['const'] ? null : `${at}: expected ${JSON.stringify(s['const'])}`));
  if (Array.isArray(s['enum'])) {
    const allowed = s['enum'] as unknown[];
    checks.push((v, at) => (allowed.includes(v) ? null : `${at}: not one of ${allowed.join(', ')}`));
  }
  addNumberChecks(s, checks);
  addStringChecks(s, checks);
  addObjectChecks(s, checks);
  if (Array.isArray(s['anyOf'])) {
    const alternatives = (s['anyOf'] as JsonSchema[]).map(compileValidator);
    checks.push((v, at) =>
      alternatives.some((alt) => alt(v) === null) ? null : `${at}: matches no alternative`,
    );
  }
  return (value) => run(checks, value, '$');
}

function run(checks: ((v: unknown, at: string) => string | null)[], v: unknown, at: string): string | null {
  for (const c of checks) {
    const err = c(v, at);
    if (err !== null) return err;
  }
  return null;
}

type Checks = ((v: unknown, at: string) => string | null)[];

function addNumberChecks(s: JsonSchema, checks: Checks): void {
  const bound = (key: string, ok: (v: number, b: number) => boolean): void => {
    const b = s[key];
    if (typeof b === 'number')
      checks.push((v, at) => (typeof v !== 'number' || ok(v, b) ? null : `${at}: violates ${key} ${b}`));
  };
  bound('minimum', (v, b) => v >= b);
  bound('maximum', (v, b) => v <= b);
  bound('exclusiveMinimum', (v, b) => v > b);
  bound('exclusiveMaximum', (v, b) => v < b);
}

function addStringChecks(s: JsonSchema, checks: Checks): void {
  const min = s['minLength'];
  const max = s['maxLength'];
  if (typeof min === 'number')
    checks.push((v, at) => (typeof v !== 'string' || v.length >= min ? null : `${at}: shorter than ${min}`));
  if (typeof max === 'number')
    checks.push((v, at) => (typeof v !== 'string' || v.length <= max ? null : `${at}: longer than ${max}`));
  if (typeof s['pattern'] === 'string') {
    const re = new RegExp(s['pattern']);
    checks.push((v, at) =>
      typeof v !== 'string' || re.test(v) ? null : `${at}: does not match ${re.source}`,
    );
  }
}

function addObjectChecks(s: JsonSchema, checks: Checks): void {
  const props = (s['properties'] ?? {}) as Record<string, JsonSchema>;
  const compiled = new Map(Object.entries(props).map(([k, sub]) => [k, compileValidator(sub)]));
  const required = (s['required'] ?? []) as string[];
  const extra = s['additionalProperties'];
  const extraCheck =
    typeof extra === 'object' && extra !== null ? compileValidator(extra as JsonSchema) : null;
  const names = s['propertyNames'] === undefined ? null : compileValidator(s['propertyNames'] as JsonSchema);
  if (compiled.size === 0 && required.length === 0 && extra === undefined && names === null) return;
  checks.push((v, at) => {
    if (typeOf(v) !== 'object') return null;
    const o = v as Record<string, unknown>;
    for (const r of required) if (!(r in o)) return `${at}.${r}: required`;
    for (const [k, val] of Object.entries(o)) {
      if (names !== null && names(k) !== null)
        return `${at}: bad property name ${JSON.stringify(k.slice(0, 40))}`;
      const sub = compiled.get(k);
      const err =
        sub !== undefined
          ? sub(val)
          : extra === false
            ? 'not allowed'
            : extraCheck !== null
              ? extraCheck(val)
              : null;
      if (err !== null) return `${at}.${k}: ${err.replace(/^\$:?\s*/, '')}`;
    }
    return null;
  });
}

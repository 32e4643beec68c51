/**
 * Structural-schema handling of custom resources, as the API server does it on every write:
 * first PRUNING (fields the schema does not specify are dropped, unless
 * `x-kubernetes-preserve-unknown-fields` keeps them; with `fieldValidation=Strict` they are an
 * error instead), then VALIDATION: type, required, enum, minimum/maximum (incl. boolean
 * exclusiveMinimum/Maximum), min/maxLength, min/maxItems, min/maxProperties, pattern,
 * `format: date-time`, properties, additionalProperties, items, anyOf, nullable,
 * x-kubernetes-int-or-string. Properties declared beside preserve-unknown-fields are still
 * validated. NOT evaluated: CEL `x-kubernetes-validations` — the controller re-checks its
 * cross-field rules itself.
 */
export interface Schema {
  type?: string;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  format?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

const typeOf = (v: unknown): string =>
  Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;

function typeMatches(expected: string, v: unknown): boolean {
  const actual = typeOf(v);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function checkScalar(s: Schema, v: unknown, path: string, out: string[]): void {
  if (s.enum && !s.enum.includes(v)) out.push(`${path}: Unsupported value: ${JSON.stringify(v)}`);
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      out.push(
        `${path}: Invalid value: ${v}: should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`,
      );
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      out.push(`${path}: Invalid value: ${v}: should be less than or equal to ${s.maximum}`);
  }
  if (typeof v === 'string') {
    if (s.minLength !== undefined && v.length < s.minLength)
      out.push(`${path}: Invalid value: should be at least ${s.minLength} chars long`);
    if (s.maxLength !== undefined && v.length > s.maxLength)
      out.push(`${path}: Too long: may not be longer than ${s.maxLength}`);
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(v))
      out.push(`${path}: Invalid value: "${v}": should match '${s.pattern}'`);
    if (s.format === 'date-time' && !DATE_TIME.test(v))
      out.push(`${path}: Invalid value: "${v}": ${path} in body must be of type date-time`);
  }
}

function checkObject(s: Schema, v: Record<string, unknown>, path: string, out: string[]): void {
  for (const key of s.required ?? []) if (!(key in v)) out.push(`${path}.${key}: Required value`);
  const n = Object.keys(v).length;
  if (s.minProperties !== undefined && n < s.minProperties)
    out.push(`${path}: should have at least ${s.minProperties} properties`);
  if (s.maxProperties !== undefined && n > s.maxProperties)
    out.push(`${path}: Too many: ${n}: must have at most ${s.maxProperties} items`);
  for (const [key, child] of Object.entries(v)) {
    const sub =
      s.properties?.[key] ??
      (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) validateAgainst(sub, child, `${path}.${key}`, out);
  }
}

/** Appends one message per violation (API-server wording) to `out`. */
export function validateAgainst(s: Schema, v: unknown, path: string, out: string[]): void {
  if (v === null && s.nullable) return;
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !Number.isInteger(v))
      out.push(`${path}: Invalid value: must be an integer or a string`);
    else if (typeof v === 'string') checkScalar(s, v, path, out);
    return;
  }
  if (s.type && !typeMatches(s.type, v)) {
    out.push(`${path}: Invalid value: "${typeOf(v)}": ${path} in body must be of type ${s.type}`);
    return;
  }
  checkScalar(s, v, path, out);
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems)
      out.push(`${path}: should have at least ${s.minItems} items`);
    if (s.maxItems !== undefined && v.length > s.maxItems)
      out.push(`${path}: Too many: ${v.length}: must have at most ${s.maxItems} items`);
    if (s.items) v.forEach((item, i) => validateAgainst(s.items!, item, `${path}[${i}]`, out));
  } else if (typeOf(v) === 'object') {
    checkObject(s, v as Record<string, unknown>, path, out);
  }
}

/** Drops what `s` does not specify, in place; returns the dropped paths (`spec.foo`). */
export function prune(s: Schema, v: unknown, path: string, dropped: string[]): void {
  if (Array.isArray(v)) {
    if (s.items) v.forEach((item, i) => prune(s.items!, item, `${path}[${i}]`, dropped));
    return;
  }
  if (typeOf(v) !== 'object') return;
  const obj = v as Record<string, unknown>;
  const keep = s['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of Object.keys(obj)) {
    const sub =
      s.properties?.[key] ??
      (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) prune(sub, obj[key], `${path}.${key}`, dropped);
    else if (!keep && s.additionalProperties !== true) {
      delete obj[key];
      dropped.push(`${path}.${key}`.replace(/^\./, ''));
    }
  }
}

/**
 * Prunes `obj` (a copy is returned) and validates it. Object metadata is the server's, not the
 * schema's: it is kept as sent (the double does not model ObjectMeta pruning).
 */
export function admitCustomResource(
  schema: unknown,
  obj: Record<string, unknown>,
): { object: Record<string, unknown>; dropped: string[]; errors: string[] } {
  const copy = structuredClone(obj);
  const root = schema as Schema;
  const dropped: string[] = [];
  const { apiVersion, kind, metadata, ...rest } = copy;
  prune({ ...root, properties: { ...root.properties } }, rest, '', dropped);
  const object: Record<string, unknown> = {
    ...rest,
    ...(apiVersion !== undefined ? { apiVersion } : {}),
    ...(kind !== undefined ? { kind } : {}),
    metadata,
  };
  const errors: string[] = [];
  validateAgainst(root, object, '', errors);
  return { object, dropped, errors: errors.map((m) => m.replace(/^\./, '')) };
}

/** Validates a custom resource against its CRD schema (no pruning); returns the violations. */
export function validateCustomResource(schema: unknown, obj: unknown): string[] {
  const out: string[] = [];
  validateAgainst(schema as Schema, obj, '', out);
  return out.map((m) => m.replace(/^\./, ''));
}

/**
 * A small validator for the structural OpenAPI v3 schemas of CRDs: type, required, enum,
 * minimum/maximum (incl. boolean exclusiveMinimum), minLength, minItems, minProperties,
 * pattern, properties, additionalProperties, items, anyOf, x-kubernetes-int-or-string,
 * x-kubernetes-preserve-unknown-fields. NOT evaluated: CEL `x-kubernetes-validations` and
 * `format` — the real API server does both; the controller re-checks cross-field rules itself.
 */
interface Schema {
  type?: string;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  minLength?: number;
  minItems?: number;
  minProperties?: number;
  pattern?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

const typeOf = (v: unknown): string =>
  Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;

function typeMatches(expected: string, v: unknown): boolean {
  const actual = typeOf(v);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

function checkScalar(s: Schema, v: unknown, path: string, out: string[]): void {
  if (s.enum && !s.enum.includes(v)) out.push(`${path}: Unsupported value: ${JSON.stringify(v)}`);
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      out.push(
        `${path}: Invalid value: ${v}: should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`,
      );
    if (s.maximum !== undefined && v > s.maximum)
      out.push(`${path}: Invalid value: ${v}: should be less than or equal to ${s.maximum}`);
  }
  if (typeof v === 'string') {
    if (s.minLength !== undefined && v.length < s.minLength)
      out.push(`${path}: Invalid value: should be at least ${s.minLength} chars long`);
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(v))
      out.push(`${path}: Invalid value: "${v}": should match '${s.pattern}'`);
  }
}

function checkObject(s: Schema, v: Record<string, unknown>, path: string, out: string[]): void {
  for (const key of s.required ?? []) if (!(key in v)) out.push(`${path}.${key}: Required value`);
  if (s.minProperties !== undefined && Object.keys(v).length < s.minProperties)
    out.push(`${path}: should have at least ${s.minProperties} properties`);
  for (const [key, child] of Object.entries(v)) {
    const sub =
      s.properties?.[key] ??
      (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) validateAgainst(sub, child, `${path}.${key}`, out);
    // Unknown fields are pruned by the real API server, not rejected: the double keeps them.
  }
}

/** Appends one message per violation (API-server wording) to `out`. */
export function validateAgainst(s: Schema, v: unknown, path: string, out: string[]): void {
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
    if (s.items) v.forEach((item, i) => validateAgainst(s.items!, item, `${path}[${i}]`, out));
  } else if (typeOf(v) === 'object' && !s['x-kubernetes-preserve-unknown-fields']) {
    checkObject(s, v as Record<string, unknown>, path, out);
  }
}

/** Validates a custom resource against its CRD schema; returns the violations (empty = valid). */
export function validateCustomResource(schema: unknown, obj: unknown): string[] {
  const out: string[] = [];
  validateAgainst(schema as Schema, obj, '', out);
  return out.map((m) => m.replace(/^\./, ''));
}

/**
 * A small structural check of a value against a CRD's openAPIV3Schema: type, required, enum,
 * properties, items, additionalProperties, minimum/maximum, minItems, pattern, anyOf and
 * x-kubernetes-int-or-string. Enough to prove an example resource is accepted by the CRD's schema
 * (CEL rules are not evaluated), without a JSON-schema library.
 */
export interface OpenApiSchema {
  type?: string;
  required?: string[];
  enum?: unknown[];
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema | boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  minItems?: number;
  minLength?: number;
  pattern?: string;
  anyOf?: OpenApiSchema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

const typeOf = (v: unknown): string => {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
};

function checkScalar(schema: OpenApiSchema, value: unknown, path: string): string[] {
  const errors: string[] = [];
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: ${String(value)} not in enum`);
  if (typeof value === 'number') {
    if (
      schema.minimum !== undefined &&
      (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)
    ) {
      errors.push(`${path}: ${value} below minimum ${schema.minimum}`);
    }
    if (schema.maximum !== undefined && value > schema.maximum)
      errors.push(`${path}: ${value} above maximum`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${path}: too short`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
      errors.push(`${path}: "${value}" does not match ${schema.pattern}`);
    }
  }
  return errors;
}

/** Returns the problems of `value` against `schema` (empty when accepted). */
export function checkOpenApi(schema: OpenApiSchema, value: unknown, path = ''): string[] {
  if (schema['x-kubernetes-int-or-string'] && (typeof value === 'string' || Number.isInteger(value))) {
    return typeof value === 'string' ? checkScalar({ pattern: schema.pattern ?? '' }, value, path) : [];
  }
  if (schema.anyOf && !schema.anyOf.some((s) => checkOpenApi(s, value, path).length === 0)) {
    return [`${path}: matches none of anyOf`];
  }
  const actual = typeOf(value);
  const typeOk =
    schema.type === undefined || actual === schema.type || (schema.type === 'number' && actual === 'integer');
  if (!typeOk) return [`${path}: expected ${schema.type}, got ${actual}`];
  if (actual === 'array') {
    const items = value as unknown[];
    const errors =
      schema.minItems !== undefined && items.length < schema.minItems ? [`${path}: too few items`] : [];
    return errors.concat(
      items.flatMap((v, i) => (schema.items ? checkOpenApi(schema.items, v, `${path}[${i}]`) : [])),
    );
  }
  if (actual === 'object') return checkObject(schema, value as Record<string, unknown>, path);
  return checkScalar(schema, value, path);
}

function checkObject(schema: OpenApiSchema, obj: Record<string, unknown>, path: string): string[] {
  const errors = (schema.required ?? []).filter((k) => !(k in obj)).map((k) => `${path}.${k}: required`);
  for (const [key, v] of Object.entries(obj)) {
    const sub = schema.properties?.[key];
    if (sub !== undefined) errors.push(...checkOpenApi(sub, v, `${path}.${key}`));
    else if (typeof schema.additionalProperties === 'object') {
      errors.push(...checkOpenApi(schema.additionalProperties, v, `${path}.${key}`));
    } else if (schema.properties && !schema['x-kubernetes-preserve-unknown-fields']) {
      errors.push(`${path}.${key}: unknown field`);
    }
  }
  return errors;
}

/**
 * Compiles a JSON Schema (the subset of `json-schema.ts`) into one straight-line boolean function.
 * The sidecar validates every record it publishes; after each ~30 ms sleep the code runs with cold
 * caches, and a walk over a tree of small closures costs several times more than one compact
 * function (measured: ADR 0008). The closure-tree validator stays the reference and explains
 * failures; a property test keeps the two in agreement.
 */
import type { JsonSchema } from './json-schema';

type Check = (v: unknown) => boolean;

/** Builds the generated source; helpers and constants are passed in by index, never inlined as text. */
class Emitter {
  readonly fns: Check[] = [];
  readonly consts: unknown[] = [];

  constant(value: unknown): string {
    this.consts.push(value);
    return `c[${this.consts.length - 1}]`;
  }

  compile(schema: JsonSchema): Check {
    const body = this.statements(schema, 'v');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- source built from the schema's structure only; values go through `c`
    const make = new Function('f', 'c', `return function check(v) {\n${body}\nreturn true;\n}`) as (
      f: Check[],
      c: unknown[],
    ) => Check;
    return make(this.fns, this.consts);
  }

  /** A nested schema as its own function (anyOf alternatives, property values, property names). */
  private sub(schema: JsonSchema): string {
    this.fns.push(this.compile(schema));
    return `f[${this.fns.length - 1}]`;
  }

  private statements(s: JsonSchema, v: string): string {
    const out: string[] = [];
    const fail = (cond: string): void => void out.push(`if (!(${cond})) return false;`);
    if (s['type'] !== undefined) {
      const types = ([] as string[]).concat(s['type'] as string | string[]);
      fail(types.map((t) => typeTest(t, v)).join(' || '));
    }
    if ('const' in s) fail(`${v} === ${this.constant(s['const'])}`);
    if (Array.isArray(s['enum'])) fail(`${this.constant(s['enum'])}.includes(${v})`);
    const num = (key: string, op: string): void => {
      if (typeof s[key] === 'number') fail(`typeof ${v} !== 'number' || ${v} ${op} ${this.constant(s[key])}`);
    };
    num('minimum', '>=');
    num('maximum', '<=');
    num('exclusiveMinimum', '>');
    num('exclusiveMaximum', '<');
    if (typeof s['minLength'] === 'number')
      fail(`typeof ${v} !== 'string' || ${v}.length >= ${this.constant(s['minLength'])}`);
    if (typeof s['maxLength'] === 'number')
      fail(`typeof ${v} !== 'string' || ${v}.length <= ${this.constant(s['maxLength'])}`);
    if (typeof s['pattern'] === 'string')
      fail(`typeof ${v} !== 'string' || ${this.constant(new RegExp(s['pattern']))}.test(${v})`);
    this.objectStatements(s, v, out);
    if (Array.isArray(s['anyOf'])) {
      const alts = (s['anyOf'] as JsonSchema[]).map((a) => `${this.sub(a)}(${v})`);
      fail(alts.join(' || '));
    }
    return out.join('\n');
  }

  private objectStatements(s: JsonSchema, v: string, out: string[]): void {
    const props = (s['properties'] ?? {}) as Record<string, JsonSchema>;
    const required = (s['required'] ?? []) as string[];
    const extra = s['additionalProperties'];
    const names = s['propertyNames'] as JsonSchema | undefined;
    if (
      Object.keys(props).length === 0 &&
      required.length === 0 &&
      extra === undefined &&
      names === undefined
    )
      return;
    const inner: string[] = [];
    for (const r of required) inner.push(`if (!(${this.constant(r)} in o)) return false;`);
    const cases: string[] = [];
    for (const [k, sub] of Object.entries(props))
      cases.push(`case ${this.constant(k)}: if (!${this.sub(sub)}(o[k])) return false; break;`);
    const otherwise =
      extra === false
        ? 'return false;'
        : typeof extra === 'object' && extra !== null
          ? `if (!${this.sub(extra as JsonSchema)}(o[k])) return false;`
          : '';
    const nameCheck = names === undefined ? '' : `if (!${this.sub(names)}(k)) return false;`;
    inner.push(
      `for (const k of Object.keys(o)) { ${nameCheck} switch (k) { ${cases.join(' ')} default: ${otherwise} } }`,
    );
    out.push(
      `if (typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v})) { const o = ${v}; ${inner.join(' ')} }`,
    );
  }
}

/** The reference validator's notion of a JSON type, as an expression over `v`. */
function typeTest(t: string, v: string): string {
  switch (t) {
    case 'null':
      return `${v} === null`;
    case 'array':
      return `Array.isArray(${v})`;
    case 'integer':
      return `Number.isInteger(${v})`;
    case 'number':
      return `(typeof ${v} === 'number' && Number.isFinite(${v}))`;
    case 'object':
      return `(typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v}))`;
    default:
      return `typeof ${v} === ${JSON.stringify(t)}`;
  }
}

/** True when `value` conforms to `schema`; the schema must already have passed the reference compiler. */
export function compileFastCheck(schema: JsonSchema): Check {
  return new Emitter().compile(schema);
}

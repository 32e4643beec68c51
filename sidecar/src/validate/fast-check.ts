/**
 * Compiles a JSON Schema (the subset of `json-schema.ts`) into one straight-line boolean function.
 * The sidecar validates every record it publishes; after each ~30 ms sleep the code runs with cold
 * caches, and a walk over a tree of small closures costs several times more than one compact
 * function (measured: ADR 0008). The closure-tree validator stays the reference and explains
 * failures; a property test keeps the two in agreement.
 */
import type { JsonSchema } from './json-schema';

type Check = (v: unknown) => boolean;

/**
 * Builds the generated source: one function with every nested schema inlined (no call per property or
 * per `anyOf` alternative, no iterator); a failure inside an `anyOf` alternative breaks out of that
 * alternative's labelled block. Constants other than property names go through `c`, never as text.
 */
class Emitter {
  readonly consts: unknown[] = [];
  private names = 0;

  constant(value: unknown): string {
    this.consts.push(value);
    return `c[${this.consts.length - 1}]`;
  }

  compile(schema: JsonSchema): Check {
    const body = this.statements(schema, 'v', 'return false;');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- source built from the schema's structure only; values go through `c`
    const make = new Function('c', `return function check(v) {\n${body}\nreturn true;\n}`) as (
      c: unknown[],
    ) => Check;
    return make(this.consts);
  }

  private fresh(prefix: string): string {
    return `${prefix}${this.names++}`;
  }

  /** Statements that run `fail` unless the value in variable `v` conforms to `s`. */
  private statements(s: JsonSchema, v: string, fail: string): string {
    const out: string[] = [];
    const need = (cond: string): void => void out.push(`if (!(${cond})) ${fail}`);
    if (s['type'] !== undefined) {
      const types = ([] as string[]).concat(s['type'] as string | string[]);
      need(types.map((t) => typeTest(t, v)).join(' || '));
    }
    if ('const' in s) need(`${v} === ${this.constant(s['const'])}`);
    if (Array.isArray(s['enum'])) need(`${this.constant(s['enum'])}.includes(${v})`);
    const num = (key: string, op: string): void => {
      if (typeof s[key] === 'number') need(`typeof ${v} !== 'number' || ${v} ${op} ${this.constant(s[key])}`);
    };
    num('minimum', '>=');
    num('maximum', '<=');
    num('exclusiveMinimum', '>');
    num('exclusiveMaximum', '<');
    if (typeof s['minLength'] === 'number')
      need(`typeof ${v} !== 'string' || ${v}.length >= ${this.constant(s['minLength'])}`);
    if (typeof s['maxLength'] === 'number')
      need(`typeof ${v} !== 'string' || ${v}.length <= ${this.constant(s['maxLength'])}`);
    if (typeof s['pattern'] === 'string')
      need(`typeof ${v} !== 'string' || ${this.constant(new RegExp(s['pattern']))}.test(${v})`);
    this.objectStatements(s, v, fail, out);
    if (Array.isArray(s['anyOf'])) out.push(this.anyOf(s['anyOf'] as JsonSchema[], v, fail));
    return out.join('\n');
  }

  /** Each alternative in a labelled block that a failure leaves early; `ok` says one ran through. */
  private anyOf(alternatives: readonly JsonSchema[], v: string, fail: string): string {
    const ok = this.fresh('ok');
    const blocks = alternatives.map((alt, n) => {
      const label = this.fresh('alt');
      const block = `${label}: { ${this.statements(alt, v, `break ${label};`)} ${ok} = true; }`;
      return n === 0 ? block : `if (!${ok}) { ${block} }`;
    });
    return `{ let ${ok} = false; ${blocks.join(' ')} if (!${ok}) ${fail} }`;
  }

  private objectStatements(s: JsonSchema, v: string, fail: string, out: string[]): void {
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
    const o = this.fresh('o');
    const keys = this.fresh('ks');
    const i = this.fresh('i');
    const k = this.fresh('k');
    const x = this.fresh('x');
    const inner: string[] = [];
    for (const r of required) inner.push(`if (!(${JSON.stringify(r)} in ${o})) ${fail}`);
    const cases: string[] = [];
    for (const [name, sub] of Object.entries(props))
      cases.push(`case ${JSON.stringify(name)}: { ${this.statements(sub, x, fail)} break; }`);
    const otherwise =
      extra === false
        ? fail
        : typeof extra === 'object' && extra !== null
          ? this.statements(extra as JsonSchema, x, fail)
          : '';
    const nameCheck = names === undefined ? '' : this.statements(names, k, fail);
    inner.push(
      `const ${keys} = Object.keys(${o});`,
      `for (let ${i} = 0; ${i} < ${keys}.length; ${i}++) { const ${k} = ${keys}[${i}]; const ${x} = ${o}[${k}]; ${nameCheck} switch (${k}) { ${cases.join(' ')} default: { ${otherwise} } } }`,
    );
    out.push(
      `if (typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v})) { const ${o} = ${v}; ${inner.join(' ')} }`,
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

/**
 * Kubernetes label selectors (`a=b,c!=d,e in (f,g),h notin (i),j,!k`) as the API server
 * understands them in `?labelSelector=`.
 */
type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

const SET_RE = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/;

function parseRequirement(raw: string): Requirement {
  const term = raw.trim();
  const set = SET_RE.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = new Set(list.split(',').map((v) => v.trim()));
    return op === 'in'
      ? (l) => l[key] !== undefined && values.has(l[key])
      : (l) => l[key] === undefined || !values.has(l[key]);
  }
  const neq = term.split('!=');
  if (neq.length === 2) return (l) => l[neq[0]!.trim()] !== neq[1]!.trim();
  const eq = term.split(/==?/);
  if (eq.length === 2) return (l) => l[eq[0]!.trim()] === eq[1]!.trim();
  if (term.startsWith('!')) return (l) => l[term.slice(1)] === undefined;
  if (/^[\w./-]+$/.test(term)) return (l) => l[term] !== undefined;
  throw new Error(`unable to parse requirement: "${term}"`);
}

/** Splits on commas that are not inside `( )`. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') terms.push(current);
  return terms;
}

/** Compiles a selector; the empty selector matches everything. Throws on a malformed one. */
export function compileLabelSelector(selector: string | null | undefined): Requirement {
  if (!selector || selector.trim() === '') return () => true;
  const reqs = splitTerms(selector).map(parseRequirement);
  return (labels) => reqs.every((r) => r(labels));
}

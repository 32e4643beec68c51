/** The few field selectors the API server supports that matter here (`a=b,c!=d` on dotted paths). */
import type { K8sObject } from './store';

const SUPPORTED = new Set(['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase']);

const valueAt = (o: K8sObject, path: string): string => {
  let cur: unknown = o;
  for (const part of path.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[part];
  return typeof cur === 'string' ? cur : '';
};

export function compileFieldSelector(selector: string | null): (o: K8sObject) => boolean {
  if (!selector) return () => true;
  const reqs = selector.split(',').map((term) => {
    const neq = term.includes('!=');
    const [path = '', value = ''] = term.split(neq ? '!=' : /==?/);
    if (!SUPPORTED.has(path.trim())) throw new Error(`field label not supported: ${path.trim()}`);
    return (o: K8sObject) => (valueAt(o, path.trim()) === value.trim()) !== neq;
  });
  return (o) => reqs.every((r) => r(o));
}

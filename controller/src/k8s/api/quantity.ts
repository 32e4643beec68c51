/** Kubernetes quantities ↔ the base units of `shared/src/units` (cores, bytes, devices). */
import type { Resources } from '../../../../shared/src/units';

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/**
 * Parses a quantity (`500m`, `4Gi`, `1e3`, `2`) into base units.
 * @throws Error naming the value when it is not a quantity.
 */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(q.trim());
  const factor = m ? SUFFIX[m[2] ?? ''] : undefined;
  if (!m || factor === undefined) throw new Error(`not a Kubernetes quantity: "${q}"`);
  return Number(m[1]) * factor;
}

/** A resource map (requests/allocatable) → base units; unparseable entries are skipped. */
export function parseResources(
  map: Readonly<Record<string, string | number>> | undefined,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(map ?? {})) {
    try {
      out[k] = parseQuantity(v);
    } catch {
      // A malformed quantity in someone else's pod must not break the cluster view.
    }
  }
  return out;
}

export function addResources(a: Resources, b: Resources): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Base units → a quantity string Kubernetes accepts (cpu in millicores, others as integers). */
export function formatQuantity(resource: string, value: number): string {
  if (resource === 'cpu') return `${Math.round(value * 1000)}m`;
  return String(Math.round(value));
}

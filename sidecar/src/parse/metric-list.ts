/** Splitting `name=value` / `name: value` lists as the frameworks print them. */
import { num, putMetric } from './types';

/**
 * Reads `a=1\tb=2` or `a=1, b=2` (MXNet Speedometer tails); `strip` removes a prefix such as `Train-`.
 * Hand-written instead of a global regex: this runs on every Speedometer line.
 */
export function readEqualsList(text: string, into: Record<string, number>, strip = ''): void {
  // Indices into `text`, no slice per segment: after each ~30 ms sleep every builtin a line touches
  // runs with cold caches (ADR 0008), so fewer of them is what makes this cheaper.
  let start = 0;
  while (start < text.length) {
    let end = start;
    let eq = -1;
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end);
      if (c === 9 || c === 44) break;
      if (c === 61 && eq === -1) eq = end;
    }
    if (eq > start) {
      let name = text.slice(start, eq).trim();
      if (strip !== '' && name.startsWith(strip)) name = name.slice(strip.length);
      putMetric(into, name, num(text.slice(eq + 1, end).trim()));
    }
    start = end + 1;
  }
}

/** Reads `name: value, name: value` (Gluon estimator); names may contain spaces. */
export function readColonList(text: string, into: Record<string, number>): void {
  for (const seg of text.split(',')) {
    const colon = seg.lastIndexOf(':');
    if (colon > 0) putMetric(into, seg.slice(0, colon), num(seg.slice(colon + 1).trim()));
  }
}

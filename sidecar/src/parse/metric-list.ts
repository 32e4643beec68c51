/** Splitting `name=value` / `name: value` lists as the frameworks print them. */
import { num, putMetric } from './types';

/**
 * Reads `a=1\tb=2` or `a=1, b=2` (MXNet Speedometer tails); `strip` removes a prefix such as `Train-`.
 * Hand-written instead of a global regex: this runs on every Speedometer line.
 */
export function readEqualsList(text: string, into: Record<string, number>, strip = ''): void {
  let start = 0;
  while (start < text.length) {
    let end = start;
    while (end < text.length && text.charCodeAt(end) !== 9 && text.charCodeAt(end) !== 44) end++;
    const seg = text.slice(start, end);
    const eq = seg.indexOf('=');
    if (eq > 0) {
      let name = seg.slice(0, eq).trim();
      if (strip !== '' && name.startsWith(strip)) name = name.slice(strip.length);
      putMetric(into, name, num(seg.slice(eq + 1).trim()));
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

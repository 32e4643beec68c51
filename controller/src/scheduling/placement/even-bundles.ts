/** How p PS and w workers spread evenly over k servers (paper §4.2, Theorem 1). */

export interface Bundle {
  readonly ps: number;
  readonly workers: number;
}

/**
 * Server i gets ⌊p/k⌋ or ⌈p/k⌉ PS and ⌊w/k⌋ or ⌈w/k⌉ workers. The extra PS go to the first
 * servers and the extra workers to the last ones, so no server carries both extras when it can
 * be avoided. Never returns an empty bundle for k ≤ p + w.
 */
export function evenBundles(p: number, w: number, k: number): Bundle[] {
  const out: Bundle[] = [];
  const psBase = Math.floor(p / k);
  const wBase = Math.floor(w / k);
  const psExtra = p % k;
  const wExtra = w % k;
  for (let i = 0; i < k; i++) {
    out.push({ ps: psBase + (i < psExtra ? 1 : 0), workers: wBase + (i >= k - wExtra ? 1 : 0) });
  }
  return out;
}

export interface BundleGroup extends Bundle {
  count: number;
}

/**
 * The bundles of `evenBundles(p, w, k)` grouped by size: at most four groups (with or without
 * an extra PS, with or without an extra worker), computed without listing k bundles.
 */
export function evenGroups(p: number, w: number, k: number): BundleGroup[] {
  const psBase = Math.floor(p / k);
  const wBase = Math.floor(w / k);
  const psExtra = p % k;
  const wExtra = w % k;
  const both = Math.max(0, psExtra + wExtra - k);
  const groups: BundleGroup[] = [
    { ps: psBase + 1, workers: wBase + 1, count: both },
    { ps: psBase + 1, workers: wBase, count: psExtra - both },
    { ps: psBase, workers: wBase + 1, count: wExtra - both },
    { ps: psBase, workers: wBase, count: k - psExtra - wExtra + both },
  ];
  return groups.filter((g) => g.count > 0 && g.ps + g.workers > 0);
}

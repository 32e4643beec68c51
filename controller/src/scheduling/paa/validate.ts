/** Input checks for PAA: clear errors naming the bad field. */
import type { ParameterBlock } from './types';

export function checkPs(ps: number): void {
  if (!Number.isInteger(ps) || ps < 1) throw new Error(`ps must be an integer ≥ 1, got ${ps}`);
}

export function checkBlocks(blocks: readonly ParameterBlock[]): void {
  if (blocks.length === 0) throw new Error('blocks must not be empty');
  const seen = new Set<string>();
  blocks.forEach((b, i) => {
    if (typeof b.name !== 'string' || b.name.length === 0)
      throw new Error(`blocks[${i}].name must be a non-empty string`);
    if (!Number.isInteger(b.size) || b.size < 1) {
      throw new Error(`blocks[${i}].size (${b.name}) must be an integer ≥ 1, got ${String(b.size)}`);
    }
    if (seen.has(b.name)) throw new Error(`blocks[${i}].name "${b.name}" appears twice`);
    seen.add(b.name);
  });
}

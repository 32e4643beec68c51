/**
 * MXNet's default parameter assignment (kvstore `dist_*`), the baseline of paper §5.3: a block
 * smaller than `MXNET_KVSTORE_BIGARRAY_BOUND` (default 10^6 parameters) goes whole to one server
 * (the paper describes the choice as random; here a seeded random choice, so runs repeat); a
 * larger block is sliced evenly across all servers (slice sizes differ by at most one).
 */
import { seededRandom } from '../../models/random';
import type { AssignedPiece, Assignment, ParameterBlock } from './types';
import { checkBlocks, checkPs } from './validate';

export const MXNET_BIGARRAY_BOUND = 1_000_000;

export function defaultMxnetAssignment(
  blocks: readonly ParameterBlock[],
  ps: number,
  seed: number,
  bound = MXNET_BIGARRAY_BOUND,
): Assignment {
  checkPs(ps);
  checkBlocks(blocks);
  const random = seededRandom(seed);
  const pieces: AssignedPiece[] = [];
  for (const b of blocks) {
    if (b.size < bound) {
      pieces.push({ block: b.name, offset: 0, size: b.size, server: Math.floor(random() * ps) });
      continue;
    }
    let offset = 0;
    for (let server = 0; server < ps; server++) {
      const size = Math.floor(b.size / ps) + (server < b.size % ps ? 1 : 0);
      if (size > 0) pieces.push({ block: b.name, offset, size, server });
      offset += size;
    }
  }
  return { ps, pieces };
}

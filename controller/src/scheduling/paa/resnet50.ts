/**
 * The 157 parameter blocks of ResNet-50 as MXNet builds it (the example-zoo `symbols/resnet.py`,
 * pre-activation "v2" units, ImageNet: 224×224 input, 1000 classes), derived from the
 * architecture rather than copied from a checkpoint:
 *
 * - `bn_data` (BatchNorm on the 3 input channels, gamma + beta)            2 blocks
 * - `conv0` 7×7, 3 → 64 (no bias), `bn0` gamma + beta                       3 blocks
 * - 16 bottleneck units in stages of 3, 4, 6, 3 with outputs 256, 512, 1024, 2048 and
 *   bottleneck width out/4; each unit: bn1 (on its input), conv1 1×1 in → mid, bn2,
 *   conv2 3×3 mid → mid, bn3, conv3 1×1 mid → out (convs without bias)   16 × 9 = 144 blocks
 * - the first unit of each stage has a projection shortcut `sc` 1×1 in → out   4 blocks
 * - final `bn1` gamma + beta on 2048 channels                               2 blocks
 * - `fc1` 2048 → 1000, weight + bias                                        2 blocks
 * Total: 157 blocks, 25,549,486 parameters (the test checks both, and that `resnet50-blocks.json`
 * is exactly this derivation).
 * BatchNorm's moving mean/variance are auxiliary states, not kvstore keys, so they are not blocks.
 */
import type { ParameterBlock } from './types';

export function resnet50Blocks(): ParameterBlock[] {
  const blocks: ParameterBlock[] = [];
  const bn = (name: string, channels: number) => {
    blocks.push({ name: `${name}_gamma`, size: channels }, { name: `${name}_beta`, size: channels });
  };
  const conv = (name: string, out: number, inp: number, kernel: number) => {
    blocks.push({ name: `${name}_weight`, size: out * inp * kernel * kernel });
  };
  bn('bn_data', 3);
  conv('conv0', 64, 3, 7);
  bn('bn0', 64);
  let channels = 64;
  const stages = [
    { units: 3, out: 256 },
    { units: 4, out: 512 },
    { units: 6, out: 1024 },
    { units: 3, out: 2048 },
  ];
  stages.forEach(({ units, out }, s) => {
    const mid = out / 4;
    for (let u = 1; u <= units; u++) {
      const name = `stage${s + 1}_unit${u}`;
      bn(`${name}_bn1`, channels);
      conv(`${name}_conv1`, mid, channels, 1);
      bn(`${name}_bn2`, mid);
      conv(`${name}_conv2`, mid, mid, 3);
      bn(`${name}_bn3`, mid);
      conv(`${name}_conv3`, out, mid, 1);
      if (u === 1) conv(`${name}_sc`, out, channels, 1);
      channels = out;
    }
  });
  bn('bn1', channels);
  blocks.push({ name: 'fc1_weight', size: 1000 * channels }, { name: 'fc1_bias', size: 1000 });
  return blocks;
}

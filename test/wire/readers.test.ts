/**
 * Every reader of the wire reads what the real sidecar sends (wire v2 batches, ADR 0014), through
 * the one decoder in `shared/src/decode.ts`: the controller's ingest and the checkpoint feed.
 */
import { describe, expect, it } from 'vitest';
import { decodeMetricsPayload } from '../../shared/src/decode';
import { Ingest } from '../../controller/src/runtime/ingest';
import { checkpointsFromMessage } from '../../controller/src/k8s/rollout/checkpoint-feed';
import type { MetricsRecord } from '../../shared/src/schemas';
import { realSidecarOutput, type WireMessage } from './real-sidecar';

const LOG = [
  'INFO:root:Epoch[0] Batch [20]\tSpeed: 100.00 samples/sec\taccuracy=0.500000',
  'INFO:root:Epoch[0] Batch [40]\tSpeed: 101.00 samples/sec\taccuracy=0.520000',
  'INFO:root:Saved checkpoint to "/ckpt/resnet-0001.params"',
];

const metrics = (m: readonly WireMessage[]) => m.filter((x) => x.topic.endsWith('/metrics'));
const recordsOf = (m: readonly WireMessage[]): MetricsRecord[] =>
  metrics(m).flatMap((x) => {
    const d = decodeMetricsPayload(x.payload);
    return d.ok ? d.records.flatMap((r) => (r.ok ? [r.value] : [])) : [];
  });

describe('readers of the real sidecar bundle’s output', () => {
  it('the sidecar sends v2 batches; the ingest accepts every record, the checkpoint included', async () => {
    const wire = await realSidecarOutput('resnet', LOG, (m) =>
      recordsOf(m).some((r) => r.kind === 'checkpoint'),
    );
    expect(metrics(wire).every((x) => (JSON.parse(x.payload.toString()) as { v: number }).v === 2)).toBe(
      true,
    );
    const seen: MetricsRecord[] = [];
    const ingest = new Ingest({ onRecord: (_t, r) => void seen.push(r), onStatus: () => {} });
    for (const x of wire) ingest.handle(x.topic, x.payload);
    expect(ingest.counters().rejectedTotal).toBe(0);
    expect(seen.map((r) => r.kind)).toEqual(['batch', 'batch', 'checkpoint']);

    // The checkpoint feed reads the same bytes the same way.
    const checkpoints = wire.flatMap((x) => checkpointsFromMessage(x.topic, x.payload));
    expect(checkpoints).toEqual([{ jobId: 'ml/resnet', atMs: expect.any(Number) }]);
  }, 30_000);
});

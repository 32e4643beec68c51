import { describe, expect, it } from 'vitest';
import { Courier } from './delivery/courier';
import { Outbox } from './delivery/outbox';
import { createLogger } from './log';
import { createLineParser } from './parse/select';
import { Pipeline } from './pipeline';

type Progress = { ino: number | null; pos: number; nextSeq: number };

function pipelineFrom(start?: { ino: number | null; pos: number }, outboxPath: string | null = null) {
  const progress: Progress[] = [];
  const pipeline = new Pipeline({
    parser: createLineParser('mxnet'),
    batchSize: 32,
    maxLineBytes: 4096,
    maxPending: 100,
    nextSeq: 10,
    ...(start ? { start } : {}),
    outbox: new Outbox(outboxPath),
    courier: new Courier({
      topic: 't',
      window: 8,
      ratePerSec: 100,
      maxBatch: 16,
      resendAfterMs: 10_000,
      onStoredThrough: () => {},
      now: () => 0,
    }),
    log: createLogger(false, () => {}),
    now: () => 0,
    onProgress: (p) => progress.push(p),
    onFinished: () => {},
  });
  return { pipeline, progress };
}

describe('Pipeline progress', () => {
  it('repeats the saved position when it stops before reading a byte', () => {
    const { pipeline, progress } = pipelineFrom({ ino: 42, pos: 1234 });
    pipeline.finished();
    expect(progress).toEqual([{ ino: 42, pos: 1234, nextSeq: 10 }]);
  });

  it('reports the position after the last complete line it read', () => {
    const { pipeline, progress } = pipelineFrom({ ino: 42, pos: 0 });
    const text = 'Epoch[0] Batch [0-50]\tSpeed: 100.00 samples/sec\taccuracy=0.5\nEpoch[0] Ba';
    pipeline.bytes(Buffer.from(text), 0, Buffer.byteLength(text), Buffer.byteLength(text), 42);
    pipeline.endOfRead();
    const complete = text.indexOf('\n') + 1;
    expect(progress.at(-1)).toEqual({ ino: 42, pos: complete, nextSeq: 11 });
  });

  it('starts over from position 0 after the log was truncated', () => {
    const { pipeline, progress } = pipelineFrom({ ino: 42, pos: 500 });
    pipeline.reset();
    pipeline.endOfRead();
    expect(progress.at(-1)).toMatchObject({ pos: 0 });
  });
});

describe('Pipeline on a full disk', () => {
  it('neither sends nor counts as read what the outbox refused: reading pauses, the position stays', () => {
    const { pipeline, progress } = pipelineFrom({ ino: 42, pos: 0 }, '/dev/full');
    const text = 'Epoch[0] Batch [0-50]\tSpeed: 100.00 samples/sec\taccuracy=0.5\n';
    pipeline.bytes(Buffer.from(text), 0, text.length, text.length, 42);
    pipeline.endOfRead();
    expect(progress).toEqual([]);
    expect(pipeline.canRead()).toBe(false);
    expect(pipeline.counters.diskErrors).toBe(1);
    pipeline.endOfRead(); // the next wake-up tries again
    expect(pipeline.counters.diskErrors).toBe(2);
  });
});

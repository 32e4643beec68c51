import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { metricsRecordSchema } from '../../../shared/src/schemas';
import { parseBuffer } from './parse-buffer';
import type { LogFormat } from '../../../shared/src/schemas';
import type { DraftRecord } from './assembler';

const FIXTURES = path.resolve(import.meta.dirname, '../../test/fixtures');
const load = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name));

type Expected = Partial<
  Record<'kind' | 'epoch' | 'batch' | 'samplesPerSec' | 'stepTime' | 'loss' | 'lossName', unknown>
>;

const CASES: { name: string; file: string; format: LogFormat; expected: Expected[]; unparsed: number }[] = [
  {
    name: 'MXNet ≥ 1.4 Speedometer with batch range, module.fit epoch lines, checkpoint, validation',
    file: 'mxnet-1.4.log',
    format: 'mxnet',
    unparsed: 1,
    expected: [
      { kind: 'batch', epoch: 0, batch: 50, samplesPerSec: 1024.35, loss: 2.301, lossName: 'cross-entropy' },
      { kind: 'batch', epoch: 0, batch: 100, stepTime: 0.032 },
      { kind: 'epoch', epoch: 0, loss: 1.9 },
      { kind: 'checkpoint', epoch: 1 },
      { kind: 'validation', epoch: 0, loss: 1.8, lossName: 'cross-entropy' },
    ],
  },
  {
    name: 'MXNet ≤ 1.3 with timestamps, Node[3] prefix, Iter lines and accuracy proxy',
    file: 'mxnet-1.3.log',
    format: 'auto',
    unparsed: 1,
    expected: [
      { kind: 'batch', epoch: 1, batch: 70, samplesPerSec: 1.08, loss: 1, lossName: '1-accuracy' },
      { kind: 'batch', epoch: 1, batch: 120, loss: 0.9 },
      { kind: 'batch', epoch: 1, batch: 140, loss: null, lossName: null },
      { kind: 'batch', epoch: 1, batch: 150, loss: 0.8 },
    ],
  },
  {
    name: 'old MXNet: one metric per line is merged into one record per batch',
    file: 'mxnet-one-metric-per-line.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', epoch: 2, batch: 100, loss: 1.25, stepTime: 0.125 },
      { kind: 'batch', epoch: 2, batch: 200, loss: 1.2 },
    ],
  },
  {
    name: 'Gluon example: comma-separated metrics',
    file: 'mxnet-gluon-example.log',
    format: 'auto',
    unparsed: 0,
    expected: [{ kind: 'batch', epoch: 0, batch: 100, loss: 3.21, lossName: 'nll-loss' }],
  },
  {
    name: 'Gluon estimator: time/interval gives step time from the batch gap',
    file: 'gluon.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', epoch: 0, batch: 0, lossName: 'softmaxcrossentropyloss' },
      { kind: 'batch', epoch: 0, batch: 50, stepTime: 0.1, samplesPerSec: 320 },
      { kind: 'epoch', epoch: 0, loss: 1.1 },
    ],
  },
  {
    name: 'Keras: redraws collapse, epochs 0-based, ms/step, val metrics, Keras 2 bar',
    file: 'keras.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', epoch: 0, batch: 50, stepTime: 0.01, loss: 1.2 },
      { kind: 'epoch', epoch: 0, batch: 100, loss: 1.1 },
      { kind: 'batch', epoch: 1, batch: 20, loss: 0.9 },
    ],
  },
  {
    name: 'TF 2.x ParameterServerStrategy coordinator (Keras 2 Model.fit to a file: verbose=1 and verbose=2 lines)',
    file: 'tf2-coordinator.log',
    format: 'auto',
    unparsed: 2, // TF's own INFO lines
    expected: [
      { kind: 'batch', epoch: 0, batch: 120, loss: 1.2177 },
      { kind: 'epoch', epoch: 0, batch: 500, stepTime: 0.045, loss: 0.6043 },
      { kind: 'batch', epoch: 1, batch: 250, loss: 0.3321 },
      { kind: 'epoch', epoch: 1, batch: 500, stepTime: 0.044, loss: 0.3077 },
      { kind: 'epoch', epoch: 2, batch: 500, stepTime: 0.042, loss: 0.2512 },
    ],
  },
  {
    name: 'TF Estimator: loss/step lines merge with global_step/sec',
    file: 'tf-estimator.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', batch: 1, stepTime: 0.08, loss: 2.302 },
      { kind: 'batch', batch: 101, stepTime: 0.08, loss: 0.12 },
      { kind: 'epoch', loss: 0.05 },
    ],
  },
  {
    name: 'Lightning tqdm bars',
    file: 'lightning.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', epoch: 0, batch: 422, loss: 0.123, lossName: 'train_loss' },
      { kind: 'epoch', epoch: 0, batch: 938, loss: 0.1 },
    ],
  },
  {
    name: 'HuggingFace dict reprs with nan/inf',
    file: 'huggingface.log',
    format: 'auto',
    unparsed: 0,
    expected: [
      { kind: 'batch', epoch: 0, loss: 0.6931 },
      { kind: 'validation', epoch: 1, loss: 0.65, lossName: 'eval_loss' },
      { kind: 'batch', epoch: 1, loss: null },
      { kind: 'epoch', epoch: 2, samplesPerSec: 318.4, lossName: 'train_loss' },
    ],
  },
  {
    name: 'JSON lines with a broken line among them',
    file: 'jsonl.log',
    format: 'auto',
    unparsed: 1,
    expected: [
      { kind: 'batch', epoch: 0, batch: 10, samplesPerSec: 128, stepTime: 0.25, loss: 0.9 },
      { kind: 'validation', epoch: 0, loss: 0.8, lossName: 'val_loss' },
      { kind: 'batch', batch: 20, stepTime: 0.25, loss: 0.7 },
    ],
  },
  {
    name: 'messy mixture: CRLF, ANSI, Horovod prefix, bad UTF-8, 100 kB line, nan speed, no final newline',
    file: 'messy-mixture.log',
    format: 'auto',
    unparsed: 3,
    expected: [
      { kind: 'batch', epoch: 0, batch: 50, samplesPerSec: 100 },
      { kind: 'batch', epoch: 0, batch: 100, samplesPerSec: null, stepTime: null },
      { kind: 'batch', epoch: 0, batch: 150, samplesPerSec: 110, loss: 0.7, lossName: '1-accuracy' },
    ],
  },
];

describe('fixture logs', () => {
  it.each(CASES)('$name', ({ file, format, expected, unparsed }) => {
    const result = parseBuffer(load(file), { format, batchSize: 32 });
    expect(result.records.map((r) => ({ ...r, ts: 0 }))).toHaveLength(expected.length);
    result.records.forEach((r, i) => {
      expect(r).toMatchObject(expected[i] as object);
      expect(metricsRecordSchema.safeParse({ v: 1, seq: i, ...r }).success).toBe(true);
    });
    expect(result.unparsed).toBe(unparsed);
  });

  it('reads split anywhere give the same facts (merging only ever spans one read)', () => {
    const buf = load('mxnet-1.4.log');
    // Per (kind, epoch, batch): all metrics seen, whichever records carried them.
    const facts = (chunkBytes?: number): Map<string, Record<string, number>> => {
      const out = new Map<string, Record<string, number>>();
      for (const r of parseBuffer(buf, chunkBytes === undefined ? {} : { chunkBytes }).records) {
        const key = `${r.kind}/${r.epoch}/${r.batch}`;
        out.set(key, { ...out.get(key), ...r.metrics });
      }
      return out;
    };
    const whole = facts();
    for (const chunkBytes of [1, 7, 64]) expect(facts(chunkBytes)).toEqual(whole);
  });

  it('bounds long lines and counts them', () => {
    const r = parseBuffer(load('messy-mixture.log'), { maxLineBytes: 4096 });
    expect(r.longLines).toBe(1);
  });

  it('a forced format ignores other frameworks', () => {
    expect(parseBuffer(load('keras.log'), { format: 'mxnet' }).records).toHaveLength(0);
  });
});

/**
 * Real output of the PyTorch reference trainers (charts/optimus/examples/pytorch; checkpoint paths
 * shortened to /checkpoint), stdout and stderr merged as the log tee writes them: an all-reduce rank 0
 * stopped by SIGTERM at step 41 and resumed at another world size, and an async PS worker 0.
 */
describe('PyTorch reference trainer logs', () => {
  const lines = (file: string) =>
    load(file)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0);
  const json = (file: string) =>
    lines(file)
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const step = (r: DraftRecord) => r.metrics['global_step'];

  it.each(
    ['pytorch-ddp.log', 'pytorch-ps-async.log'].flatMap((file) =>
      (['auto', 'jsonl'] as const).map((format) => ({ file, format })),
    ),
  )(
    '$file as $format: one record per JSON line, every field carried; notes and TensorPipe lines are not records',
    ({ file, format }) => {
      const { records, unparsed } = parseBuffer(load(file), { format });
      const expected = json(file);
      expect(records).toHaveLength(expected.length);
      records.forEach((r, i) => {
        const e = expected[i]!;
        expect(r).toMatchObject({
          framework: 'jsonl',
          kind: e['kind'],
          epoch: e['epoch'],
          batch: e['batch'] ?? null,
          samplesPerSec: e['samples_per_sec'] ?? null,
          stepTime: e['step_time'] ?? null,
          loss: e['loss'] ?? null,
        });
        expect(step(r)).toBe(e['global_step']);
        expect(metricsRecordSchema.safeParse({ v: 1, seq: i, ...r }).success).toBe(true);
      });
      expect(unparsed).toBe(lines(file).length - expected.length);
    },
  );

  it('a resize reads as: last step, a stop checkpoint of that step, the next step after the restart', () => {
    const records = parseBuffer(load('pytorch-ddp.log')).records;
    const stop = records.findIndex((r) => r.kind === 'checkpoint' && step(r) === 41);
    expect(step(records[stop - 1]!)).toBe(41);
    expect(records[stop + 1]).toMatchObject({
      kind: 'batch',
      epoch: 4,
      batch: 1,
      metrics: { global_step: 42, workers: 1 },
    });
    const steps = records.filter((r) => r.kind === 'batch').map(step);
    expect(steps).toEqual([...steps].sort((a, b) => (a ?? 0) - (b ?? 0)));
    expect(new Set(steps).size).toBe(steps.length);
  });
});

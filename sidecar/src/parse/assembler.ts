/**
 * Turns parsed lines into draft records: merges lines that belong together (MXNet prints one metric per
 * line; TF prints loss and speed apart), collapses progress-bar redraws, and derives step time and loss.
 * Pending lines are flushed by the caller at the end of every read, so merging never adds latency.
 */
import { boundedOrNull, type BoundedField } from '../../../shared/src/bounds';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { pickLoss } from './loss';
import type { ParsedLine } from './types';

/** A record without its sequence number (assigned when it is queued for delivery). */
export type DraftRecord = Omit<MetricsRecord, 'v' | 'seq'>;

export interface AssemblerOptions {
  /** Per-worker mini-batch size, when configured: turns samples/s into step time and back. */
  batchSize: number | null;
  /** Receives each finished record. */
  emit: (record: DraftRecord) => void;
}

interface Pending {
  p: ParsedLine;
  ts: number;
  wake: number;
}

interface LastBatch {
  epoch: number | null;
  batch: number;
  ts: number;
  wake: number;
}

const sameOrNull = (a: number | null, b: number | null): boolean => a === null || b === null || a === b;

/** Accepts parsed lines in log order; see the module comment. */
export class RecordAssembler {
  private pending: Pending | null = null;
  private last: LastBatch | null = null;

  constructor(private readonly opts: AssemblerOptions) {}

  /** `wake` identifies one read wake-up: line spacing within one wake-up says nothing about time. */
  accept(p: ParsedLine, ts: number, wake: number): void {
    const cur = this.pending;
    if (cur !== null && this.combines(cur.p, p)) {
      cur.p = p.combine === 'replace' ? p : merge(cur.p, p);
      return;
    }
    this.flush();
    this.pending = { p, ts, wake };
  }

  /** Emits the pending record, if any. */
  flush(): void {
    const cur = this.pending;
    if (cur === null) return;
    this.pending = null;
    this.opts.emit(this.derive(cur));
  }

  /** Forgets timing history (the log was truncated or rotated). */
  reset(): void {
    this.flush();
    this.last = null;
  }

  private combines(a: ParsedLine, b: ParsedLine): boolean {
    if (b.combine === 'none' || a.combine !== b.combine) return false;
    if (a.framework !== b.framework || a.kind !== b.kind || !sameOrNull(a.epoch, b.epoch)) return false;
    return b.combine === 'replace' || sameOrNull(a.batch, b.batch);
  }

  private derive(cur: Pending): DraftRecord {
    const { p } = cur;
    const batchSize = this.opts.batchSize;
    let stepTime = p.stepTime;
    let samplesPerSec = p.samplesPerSec;
    if (p.kind === 'batch') {
      const prev = this.last;
      const delta =
        prev !== null && p.batch !== null && prev.epoch === p.epoch && p.batch > prev.batch
          ? p.batch - prev.batch
          : null;
      if (stepTime === null && samplesPerSec !== null && samplesPerSec > 0 && batchSize !== null) {
        stepTime = batchSize / samplesPerSec;
      }
      if (stepTime === null && p.intervalSec !== null && delta !== null) stepTime = p.intervalSec / delta;
      if (
        stepTime === null &&
        delta !== null &&
        prev !== null &&
        prev.wake !== cur.wake &&
        cur.ts > prev.ts
      ) {
        stepTime = (cur.ts - prev.ts) / 1000 / delta;
      }
      if (samplesPerSec === null && stepTime !== null && stepTime > 0 && batchSize !== null) {
        samplesPerSec = batchSize / stepTime;
      }
      if (p.batch !== null) this.last = { epoch: p.epoch, batch: p.batch, ts: cur.ts, wake: cur.wake };
    }
    const { loss, lossName } = pickLoss(p.metrics, p.kind === 'validation');
    return {
      ts: cur.ts,
      framework: p.framework,
      kind: p.kind,
      epoch: boundedInt('epoch', p.epoch),
      batch: boundedInt('batch', p.batch),
      samplesPerSec: boundedOrNull('samplesPerSec', samplesPerSec),
      stepTime: boundedOrNull('stepTime', stepTime),
      loss: boundedOrNull('value', loss),
      lossName: loss === null || boundedOrNull('value', loss) === null ? null : lossName,
      metrics: p.metrics,
    };
  }
}

/**
 * Figures outside their physical bounds (shared/src/bounds.ts: a printed `-5s`, a 30-digit batch,
 * `epoch 1e12`) become null rather than a record the controller would refuse.
 */
const boundedInt = (field: BoundedField, v: number | null): number | null =>
  v !== null && Number.isSafeInteger(v) ? boundedOrNull(field, v) : null;

function merge(a: ParsedLine, b: ParsedLine): ParsedLine {
  return {
    ...a,
    epoch: b.epoch ?? a.epoch,
    batch: b.batch ?? a.batch,
    samplesPerSec: b.samplesPerSec ?? a.samplesPerSec,
    stepTime: b.stepTime ?? a.stepTime,
    intervalSec: b.intervalSec ?? a.intervalSec,
    metrics: { ...a.metrics, ...b.metrics },
  };
}

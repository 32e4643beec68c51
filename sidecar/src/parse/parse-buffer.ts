/**
 * Parses a whole log held in memory: the same splitter → parser → assembler path the sidecar runs,
 * without I/O. Used by tests, fixtures and the throughput benchmark.
 */
import { LineSplitter } from '../input/line-splitter';
import { type DraftRecord, RecordAssembler } from './assembler';
import type { LogFormat } from '../../../shared/src/schemas';
import { createLineParser } from './select';

export interface ParseBufferOptions {
  format?: LogFormat;
  batchSize?: number | null;
  maxLineBytes?: number;
  /** Bytes per simulated read (default: the whole buffer in one read). */
  chunkBytes?: number;
  /**
   * Receives each record instead of `records` keeping it: the sidecar hands every record on and
   * forgets it, so a throughput figure must not pay for holding a million of them (the benchmark).
   */
  onRecord?: (record: DraftRecord) => void;
}

export interface ParseBufferResult {
  /** Every record, in order (empty with `onRecord`). */
  records: DraftRecord[];
  /** Records emitted (also with `onRecord`). */
  recordCount: number;
  lines: number;
  unparsed: number;
  longLines: number;
}

/** Runs the parsing path over `buf` as if it had been read in `chunkBytes` pieces (ts = 0). */
export function parseBuffer(buf: Buffer, o: ParseBufferOptions = {}): ParseBufferResult {
  const parser = createLineParser(o.format ?? 'auto');
  const records: DraftRecord[] = [];
  let recordCount = 0;
  const keep = o.onRecord ?? ((r: DraftRecord) => void records.push(r));
  const assembler = new RecordAssembler({
    batchSize: o.batchSize ?? null,
    emit: (r) => {
      recordCount++;
      keep(r);
    },
  });
  let lines = 0;
  let unparsed = 0;
  const splitter = new LineSplitter({
    maxLineBytes: o.maxLineBytes ?? 65_536,
    onLine: (line) => {
      lines++;
      const r = parser.parse(line);
      if (r === null) unparsed++;
      else if (r !== 'recognized') assembler.accept(r, 0, 0);
    },
  });
  const step = o.chunkBytes ?? buf.length;
  for (let at = 0; at < buf.length; at += step) {
    splitter.push(buf, at, Math.min(buf.length, at + step));
    assembler.flush();
  }
  splitter.flushPartial();
  assembler.flush();
  return { records, recordCount, lines, unparsed, longLines: splitter.longLines };
}

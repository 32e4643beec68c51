/**
 * The local store's append-only record log, `records.jsonl` (ADR 0032). At start a torn last line
 * (a kill during its append: never acknowledged) is cut off and counted, and complete lines that are
 * not records are moved to `records.quarantined.jsonl` with their line numbers and counted; the rest
 * is what the runtime replays. While the store runs, a log truncated, removed or replaced by anyone
 * else is noticed within one watermark interval and said; a removed or replaced one is restored from
 * the descriptor the store still holds, so no acknowledged record is lost to it.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import type { StoredRecord } from '../runtime/backend';
import { fsyncDirectory, writeFileDurable } from './file-store-fsync';
import { parseRecordLine } from './file-store-schema';
import { dirname } from 'node:path';

/** Something outside the store changed the log, or the start found damage. */
export type LogIntegrityEvent =
  | { readonly kind: 'torn-tail'; readonly file: string; readonly bytes: number }
  | {
      readonly kind: 'quarantined';
      readonly file: string;
      readonly lines: readonly number[];
      readonly quarantine: string;
    }
  | { readonly kind: 'truncated'; readonly file: string; readonly lostRecords: number }
  | { readonly kind: 'replaced' | 'removed'; readonly file: string; readonly keptAs: string | null };

export interface ScanResult {
  readonly records: StoredRecord[];
  /** Complete lines read (records and quarantined ones). */
  readonly lines: number;
}

export class RecordLog {
  /** Kept open for appends ('a+': reads too, to restore a removed log from it). */
  private fd: number | null = null;
  private size = 0;
  private ino = 0;
  /** Records in the file (whole lines), as far as this store wrote them. */
  lines = 0;
  private dirSynced = false;

  constructor(
    readonly path: string,
    private readonly onEvent: (e: LogIntegrityEvent) => void,
  ) {}

  get quarantinePath(): string {
    return this.path.replace(/\.jsonl$/, '') + '.quarantined.jsonl';
  }

  /** Reads the whole log, repairing a torn tail and quarantining lines that are not records. */
  scan(): ScanResult {
    this.close();
    if (!existsSync(this.path)) return { records: [], lines: (this.lines = 0) };
    const buf = readFileSync(this.path);
    const end = buf.lastIndexOf(0x0a) + 1;
    if (end < buf.length) {
      // Only the last line can be torn (its append never finished, so it was never acknowledged).
      const fd = openSync(this.path, 'r+');
      try {
        ftruncateSync(fd, end);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.onEvent({ kind: 'torn-tail', file: this.path, bytes: buf.length - end });
    }
    const records: StoredRecord[] = [];
    const bad: { line: number; reason: string; text: string }[] = [];
    const text = buf.subarray(0, end).toString('utf8');
    const lines = text === '' ? [] : text.slice(0, -1).split('\n');
    let n = 0;
    for (const line of lines) {
      n += 1;
      if (line === '') continue; // carries nothing; only ever written by hand
      const parsed = parseRecordLine(line);
      if (parsed.ok) records.push(parsed.value);
      else bad.push({ line: n, reason: parsed.reason, text: line });
    }
    if (bad.length > 0) this.quarantine(bad, records);
    this.lines = records.length;
    return { records, lines: records.length + bad.length };
  }

  append(r: StoredRecord): void {
    const fd = this.open();
    // Cheap (one fstat): someone cut the file under us, e.g. `: > records.jsonl`.
    if (fstatSync(fd).size < this.size) this.truncatedUnderUs(fd);
    const line = Buffer.from(`${JSON.stringify(r)}\n`);
    let n = 0;
    try {
      n = writeSync(fd, line);
    } finally {
      // A failed or short write (disk full) must not leave half a line for the next append to glue
      // onto: cut the log back to its last whole line. The caller counts the record as not stored.
      if (n !== line.length) ftruncateSync(fd, this.size);
    }
    if (n !== line.length) throw new Error(`short write to ${this.path} (${n} of ${line.length} bytes)`);
    this.size += n;
    this.lines += 1;
  }

  /**
   * fdatasync of everything appended so far, after checking the file is still the one we append
   * to (see the module comment). Called once per watermark interval.
   */
  async durable(): Promise<void> {
    if (this.fd === null) return;
    this.check();
    if (!this.dirSynced) {
      fsyncDirectory(dirname(this.path));
      this.dirSynced = true;
    }
    const fd = this.fd;
    if (fd === null) return;
    await new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Replaces the log atomically and durably: a kill leaves either the old log or the new one. */
  rewrite(records: readonly StoredRecord[]): void {
    this.close();
    writeFileDurable(this.path, records.map((v) => `${JSON.stringify(v)}\n`).join(''));
    this.lines = records.length;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd !== null) return this.fd;
    const fd = openSync(this.path, 'a+', 0o644);
    const st = fstatSync(fd);
    [this.fd, this.size, this.ino, this.dirSynced] = [fd, st.size, st.ino, false];
    return fd;
  }

  /** Removed or replaced by someone else: our descriptor still holds every record; put it back. */
  private check(): void {
    const fd = this.fd;
    if (fd === null) return;
    let onDisk: number | null = null;
    try {
      onDisk = statSync(this.path).ino;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (onDisk === this.ino) {
      if (fstatSync(fd).size < this.size) this.truncatedUnderUs(fd);
      return;
    }
    const keptAs = onDisk === null ? null : `${this.path}.foreign-${Date.now()}`;
    if (keptAs !== null) renameSync(this.path, keptAs);
    const size = fstatSync(fd).size;
    const data = Buffer.alloc(size);
    for (let off = 0; off < size;) off += readSync(fd, data, off, size - off, off);
    this.close();
    writeFileDurable(this.path, data);
    this.open();
    this.onEvent({ kind: onDisk === null ? 'removed' : 'replaced', file: this.path, keptAs });
  }

  /** The bytes are gone: say how many records went with them, and go on from the new end. */
  private truncatedUnderUs(fd: number): void {
    const size = fstatSync(fd).size;
    const data = Buffer.alloc(size);
    for (let off = 0; off < size;) off += readSync(fd, data, off, size - off, off);
    let left = 0;
    for (const b of data) if (b === 0x0a) left++;
    const lostRecords = Math.max(0, this.lines - left);
    this.size = size;
    this.lines = left;
    this.onEvent({ kind: 'truncated', file: this.path, lostRecords });
  }

  private quarantine(
    bad: readonly { line: number; reason: string; text: string }[],
    kept: StoredRecord[],
  ): void {
    const q = this.quarantinePath;
    const at = new Date().toISOString();
    appendFileSync(
      q,
      bad.map((b) => `${JSON.stringify({ at, line: b.line, reason: b.reason, text: b.text })}\n`).join(''),
    );
    const fd = openSync(q, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // Only once the quarantine is durable does the log lose those lines.
    this.rewrite(kept);
    this.onEvent({ kind: 'quarantined', file: this.path, lines: bad.map((b) => b.line), quarantine: q });
  }
}

/**
 * Disk copy of records not yet acknowledged: an append-only file, one entry per line as
 * `seq<TAB>ino<TAB>pos<TAB>payload` (a JSON payload never contains a raw tab or newline), emptied when the
 * broker has acknowledged everything, and rewritten when acknowledged entries pile up in front.
 * Each entry carries the log position after its line, so a restart resumes exactly after it.
 */
import fs from 'node:fs';

export interface OutboxEntry {
  seq: number;
  /** Log inode and position just after the record's last line. */
  ino: number | null;
  pos: number;
  /** The record as published (JSON). */
  payload: string;
}

/**
 * Size at which the file is emptied or rewritten. Large on purpose: emptying frees its blocks, and on
 * a filesystem mounted with `discard` each free is a synchronous request to the disk.
 */
const REWRITE_BYTES = 4 << 20;

export class Outbox {
  private bytes = 0;
  /** Kept open: one write per read wake-up instead of open + write + close. */
  private fd: number | null = null;

  constructor(private readonly path: string | null) {}

  /** Reads the surviving entries in order; a torn last line (crash mid-write) is skipped. */
  load(): OutboxEntry[] {
    if (this.path === null) return [];
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    this.bytes = Buffer.byteLength(text);
    const out: OutboxEntry[] = [];
    // The last line may be torn (killed mid-write): only newline-terminated, well-formed lines count.
    const lines = text.split('\n');
    lines.pop();
    for (const line of lines) {
      const [s, i, p, payload] = line.split('\t', 4);
      const seq = Number(s);
      const pos = Number(p);
      if (payload === undefined || !Number.isSafeInteger(seq) || !Number.isSafeInteger(pos)) continue;
      out.push({ seq, ino: i === '' ? null : Number(i), pos, payload });
    }
    return out;
  }

  /** Appends entries in one write (called once per read wake-up). */
  append(entries: readonly OutboxEntry[]): void {
    if (this.path === null || entries.length === 0) return;
    const text = serialize(entries);
    this.fd ??= fs.openSync(this.path, 'a');
    fs.writeSync(this.fd, text);
    this.bytes += Buffer.byteLength(text);
  }

  /**
   * Called after acknowledgements with the entries still pending. Empties or rewrites the file when
   * it has grown; `beforeShrink` must persist state first so the sequence number is never reused.
   */
  compact(pending: readonly OutboxEntry[], beforeShrink: () => void): void {
    if (this.path === null || this.bytes < REWRITE_BYTES) return;
    beforeShrink();
    if (pending.length === 0) {
      if (this.fd !== null) fs.ftruncateSync(this.fd, 0);
      else fs.truncateSync(this.path, 0);
      this.bytes = 0;
      return;
    }
    const tmp = `${this.path}.tmp`;
    const text = serialize(pending);
    fs.writeFileSync(tmp, text);
    this.close();
    fs.renameSync(tmp, this.path);
    this.bytes = Buffer.byteLength(text);
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

function serialize(entries: readonly OutboxEntry[]): string {
  let text = '';
  for (const e of entries) text += `${e.seq}\t${e.ino ?? ''}\t${e.pos}\t${e.payload}\n`;
  return text;
}

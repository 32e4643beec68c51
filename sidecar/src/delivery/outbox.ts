/**
 * Disk copy of records the controller has not yet confirmed stored (ADR 0012): an append-only file,
 * one entry per line as `seq<TAB>ino<TAB>pos<TAB>payload` (a JSON payload never contains a raw tab or
 * newline), emptied when the controller has confirmed everything, and rewritten when confirmed
 * entries pile up in front.
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

  /**
   * Appends entries in one write (called once per read wake-up). False when the disk refused
   * (ENOSPC, EIO…): the file is cut back to its last whole entry, and the caller must not send
   * these records (nor advance its saved position past them) until an append succeeds.
   */
  append(entries: readonly OutboxEntry[]): boolean {
    if (this.path === null || entries.length === 0) return true;
    const text = Buffer.from(serialize(entries));
    let written = 0;
    try {
      if (this.fd === null) {
        this.fd = fs.openSync(this.path, 'a');
        this.bytes = fs.fstatSync(this.fd).size;
      }
      written = fs.writeSync(this.fd, text);
    } catch (err) {
      this.lastError = err as NodeJS.ErrnoException;
    }
    if (written === text.length) {
      this.bytes += written;
      this.underPressure = false;
      return true;
    }
    this.underPressure = true;
    this.lastError ??= Object.assign(new Error('short write'), { code: 'ENOSPC' });
    // A torn entry at the end would be skipped on load, but one glued to the next append would not.
    if (written > 0 && this.fd !== null) {
      try {
        fs.ftruncateSync(this.fd, this.bytes);
      } catch {
        // The file then ends in a torn line, which `load` skips: the entries were never sent.
      }
    }
    return false;
  }

  /** The error of the last failed append, for logs. */
  lastError: NodeJS.ErrnoException | null = null;
  /**
   * True after an append failed (the disk is full): compaction then runs at every confirmation, not
   * only past REWRITE_BYTES, since the space the confirmed entries hold may be what the disk lacks.
   */
  underPressure = false;

  /**
   * Called after confirmations with the entries still pending. Empties or rewrites the file when it
   * has grown; `beforeShrink` must persist state first (returning false when it could not) so the
   * sequence number is never reused. A failure leaves the file as it was: it only grows.
   */
  compact(pending: readonly OutboxEntry[], beforeShrink: () => boolean): void {
    if (this.path === null || this.bytes === 0) return;
    if (this.bytes < REWRITE_BYTES && !this.underPressure) return;
    if (!beforeShrink()) return;
    try {
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
    } catch (err) {
      this.lastError = err as NodeJS.ErrnoException;
      try {
        fs.rmSync(`${this.path}.tmp`, { force: true });
      } catch {
        // nothing more to do: the old file is intact
      }
    }
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

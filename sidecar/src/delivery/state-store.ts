/**
 * The sidecar's small persistent state: where in which log file it stopped, the next sequence number
 * and how far the controller has confirmed. Saved in place, padded to a fixed size, by one write at
 * offset 0 (a single write of one block is never half-done when the process dies). Not temp file +
 * rename: each rename frees the old file's block, and on a filesystem mounted with `discard` (this
 * project's CI machine; many cloud disks) that costs a synchronous discard request every save.
 */
import fs from 'node:fs';

export interface SidecarState {
  v: 1;
  /** Inode of the log file `pos` refers to; a different inode means the file was replaced. */
  ino: number | null;
  /** Byte offset just after the last complete line consumed. */
  pos: number;
  nextSeq: number;
  /** Every record with seq ≤ this was confirmed stored by the controller (a watermark covered it). */
  ackedSeq: number;
}

const isState = (x: unknown): x is SidecarState => {
  const o = x as Partial<SidecarState> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    o.v === 1 &&
    (o.ino === null || typeof o.ino === 'number') &&
    typeof o.pos === 'number' &&
    typeof o.nextSeq === 'number' &&
    typeof o.ackedSeq === 'number'
  );
};

/**
 * Initial sequence number when no state survives (a new pod for the same task): milliseconds × 1000 keeps
 * `seq` increasing across pods without coordination, and stays below 2^53 for centuries.
 */
export const freshSeq = (nowMs: number): number => Math.floor(nowMs) * 1000;

/** Size the saved JSON is padded to (it is about 100 bytes); the file never shrinks or grows. */
const SLOT_BYTES = 256;

/** Loads and saves {@link SidecarState}; a missing or corrupt file yields null (counted by the caller). */
export class StateStore {
  private fd: number | null = null;

  constructor(private readonly path: string | null) {}

  load(): SidecarState | null {
    if (this.path === null) return null;
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.path, 'utf8'));
      return isState(parsed) ? parsed : null;
    } catch {
      return null;
    }
  }

  /**
   * Writes the state; false when the disk refused (the caller retries, and must not shrink the outbox
   * meanwhile: the outbox then still proves the sequence numbers in use).
   */
  save(state: SidecarState): boolean {
    if (this.path === null) return true;
    try {
      this.write(state);
      return true;
    } catch (err) {
      this.lastError = err as NodeJS.ErrnoException;
      return false;
    }
  }

  lastError: NodeJS.ErrnoException | null = null;

  private write(state: SidecarState): void {
    if (this.path === null) return;
    const json = JSON.stringify(state);
    // Trailing spaces are JSON whitespace: the padded file still parses as the state.
    const size = Math.ceil((json.length + 1) / SLOT_BYTES) * SLOT_BYTES;
    const first = this.fd === null;
    // Not 'w': truncating first would leave an empty file if the process died before the write.
    this.fd ??= fs.openSync(this.path, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o644);
    const text = `${json}${' '.repeat(size - json.length - 1)}\n`;
    // In place, over blocks the file already has: a full disk refuses only the very first save.
    if (fs.writeSync(this.fd, text, 0) !== text.length) throw new Error('short write of the state file');
    if (first && fs.fstatSync(this.fd).size > size) fs.ftruncateSync(this.fd, size);
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * The sidecar's small persistent state: where in which log file it stopped, the next sequence number
 * and how far the broker has acknowledged. Written atomically (temp file + rename).
 */
import fs from 'node:fs';

export interface SidecarState {
  v: 1;
  /** Inode of the log file `pos` refers to; a different inode means the file was replaced. */
  ino: number | null;
  /** Byte offset just after the last complete line consumed. */
  pos: number;
  nextSeq: number;
  /** Every record with seq ≤ this was acknowledged by the broker. */
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

/** Loads and saves {@link SidecarState}; a missing or corrupt file yields null (counted by the caller). */
export class StateStore {
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

  save(state: SidecarState): void {
    if (this.path === null) return;
    const tmp = `${this.path}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(state));
    fs.renameSync(tmp, this.path);
  }
}

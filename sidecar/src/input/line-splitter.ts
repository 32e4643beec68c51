/**
 * Bytes → text lines. Splits on `\n`, `\r` (progress-bar redraws) and `\b` (Keras erases with it),
 * strips ANSI escape sequences, decodes UTF-8 with replacement characters for invalid bytes,
 * bounds line length (the excess is dropped and counted), and keeps an unterminated last line pending.
 */

// CSI sequences (colours, cursor moves) and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

export interface SplitterOptions {
  /** Longest line kept, in bytes; longer lines are cut to this length. */
  maxLineBytes: number;
  /** Receives each non-empty line (ANSI stripped). */
  onLine: (line: string) => void;
}

/** Incremental splitter; see the module comment. */
export class LineSplitter {
  private carry: Buffer[] = [];
  private carryBytes = 0;
  private overlong = false;
  /** Lines cut because they exceeded `maxLineBytes`. */
  longLines = 0;

  constructor(private readonly opts: SplitterOptions) {}

  /** Bytes received but not yet ended by a line terminator. */
  get pendingBytes(): number {
    return this.carryBytes;
  }

  /** Feeds bytes `buf[start, end)`. */
  push(buf: Buffer, start = 0, end = buf.length): void {
    // Terminators are found with native `indexOf`, each searched for again only once passed: far
    // cheaper than a byte loop in JavaScript when the sidecar runs without the optimising compiler.
    const view = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
    let lf = -2;
    let cr = -2;
    let bs = -2;
    let lineStart = 0;
    for (;;) {
      if (lf !== -1 && lf < lineStart) lf = view.indexOf(10, lineStart);
      if (cr !== -1 && cr < lineStart) cr = view.indexOf(13, lineStart);
      if (bs !== -1 && bs < lineStart) bs = view.indexOf(8, lineStart);
      const next = earliest(earliest(lf, cr), bs);
      if (next === -1) break;
      this.finishLine(view, lineStart, next);
      lineStart = next + 1;
    }
    if (lineStart < view.length) this.keep(view.subarray(lineStart));
  }

  /** Emits the pending partial line as a line (the writer has finished). */
  flushPartial(): void {
    if (this.carryBytes > 0) this.finishLine(Buffer.alloc(0), 0, 0);
  }

  /** Drops the pending partial line (the file was truncated or replaced). */
  discard(): void {
    this.carry = [];
    this.carryBytes = 0;
    this.overlong = false;
  }

  private keep(part: Buffer): void {
    const room = this.opts.maxLineBytes - this.carryBytes;
    if (room <= 0) {
      this.overlong = true;
      this.carryBytes += part.length;
      return;
    }
    // Copy: the caller reuses its read buffer.
    this.carry.push(Buffer.from(part.subarray(0, Math.min(room, part.length))));
    if (part.length > room) this.overlong = true;
    this.carryBytes += part.length;
  }

  private finishLine(buf: Buffer, s: number, e: number): void {
    let text: string;
    if (this.carryBytes === 0) {
      if (e === s) return;
      const cut = Math.min(e, s + this.opts.maxLineBytes);
      if (cut < e) this.longLines++;
      text = buf.toString('utf8', s, cut);
    } else {
      this.keep(buf.subarray(s, e));
      if (this.overlong) this.longLines++;
      text = Buffer.concat(this.carry).toString('utf8');
      this.discard();
    }
    if (text.includes('\x1b')) text = text.replace(ANSI, '');
    if (text.length > 0) this.opts.onLine(text);
  }
}

/** The smaller of two positions, where -1 means "none". */
function earliest(a: number, b: number): number {
  if (a === -1) return b;
  if (b === -1) return a;
  return a < b ? a : b;
}

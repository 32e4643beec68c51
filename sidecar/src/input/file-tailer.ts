/**
 * Follows a log file by path: waits for it to appear, reads from a saved position, notices rotation
 * (the path now names another inode: the old file is drained first) and truncation (`copytruncate`:
 * the size fell below the position). Woken by `fs.watch` on the directory, with polling as a fallback.
 * Reads are synchronous: regular-file reads do not block, and skipping the thread pool saves CPU.
 *
 * CPU at a steady trickle of lines is dominated by wake-ups, not parsing: after a change event the
 * watcher is closed and the file is polled every `quietMs` while data keeps coming, and re-armed when a
 * poll finds nothing. A lone line is read at once; a stream is read in batches at most `quietMs` late.
 *
 * Idle, the fallback poll backs off (doubling up to `idlePollMs`) once the watcher has shown that it
 * works here — it announced a change — and while the done marker lives in the watched directory. A
 * poll that finds data the watcher did not announce (a filesystem without inotify, NFS) drops the
 * trust and polling returns to `pollMs`. An idle sidecar then wakes a few times a minute.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface TailSink {
  /** Bytes `buf[start, end)` read from file `ino`; `posAfter` is the file offset after them. */
  bytes(buf: Buffer, start: number, end: number, posAfter: number, ino: number | null): void;
  /** The current file ended for good (rotated away or finished): a trailing partial line is complete. */
  fileEnded(): void;
  /** The file was truncated or replaced before being read to the end: drop any partial line. */
  reset(): void;
  /** One wake-up has read everything available. */
  endOfRead(): void;
  /** False while downstream is full (backpressure): reading pauses, the log keeps the bytes. */
  canRead(): boolean;
  /** The done marker exists and the log was read to its end. */
  finished(): void;
  /**
   * True when nothing downstream waits on the next wake-up (no record unsaved or unconfirmed): the
   * tailer's wake-ups are also where acknowledgements are read, so only then may it poll less often.
   */
  mayIdle(): boolean;
}

export interface FileTailerOptions {
  path: string;
  doneFile: string | null;
  start: { ino: number | null; pos: number };
  pollMs: number;
  /** Longest fallback poll interval while idle with a working watcher (≤ `pollMs`: no back-off). */
  idlePollMs: number;
  /** Batching delay while lines keep arriving (bounded extra latency). */
  quietMs: number;
  sink: TailSink;
}

const CHUNK = 64 * 1024;
/** Empty batching polls in a row before going back to the (cheaper when idle) watcher. */
const IDLE_POLLS = 8;

export class FileTailer {
  private fd: number | null = null;
  private ino = -1;
  private pos = 0;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private watcher: fs.FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  private pollDelay = 0;
  /** The watcher announced a change, and no poll has since found data it did not announce. */
  private watcherTrusted = false;
  private scheduled = false;
  private quiet: NodeJS.Timeout | null = null;
  private quietArmed = false;
  private stopped = false;
  private done = false;
  private readBytes = 0;
  private paused = false;
  private emptyPolls = 0;
  /** True while reads are batched by polling (the watcher is closed). */
  private batching = false;

  /** Longest idle poll interval, never below `pollMs`. */
  private readonly idlePollMs: number;
  /** The done marker is absent or in the log's directory, so the watcher announces it. */
  private readonly doneWatched: boolean;

  constructor(private readonly opts: FileTailerOptions) {
    this.idlePollMs = Math.max(opts.pollMs, opts.idlePollMs);
    this.doneWatched = opts.doneFile === null || path.dirname(opts.doneFile) === path.dirname(opts.path);
  }

  start(): void {
    this.pollDelay = this.opts.pollMs;
    this.poll = setTimeout(() => this.onPoll(), this.pollDelay);
    this.watch();
    this.wake(true);
  }

  /** The fallback poll: read (and check rotation and the done marker), then choose the next delay. */
  private onPoll(): void {
    const before = this.readBytes;
    this.wake(true);
    if (this.stopped || this.done) return;
    const found = this.readBytes !== before;
    if (found && !this.batching) this.watcherTrusted = false;
    const idle =
      !found &&
      !this.batching &&
      !this.paused &&
      this.watcher !== null &&
      this.watcherTrusted &&
      this.doneWatched &&
      this.opts.sink.mayIdle();
    const next = idle ? Math.min(this.idlePollMs, this.pollDelay * 2) : this.opts.pollMs;
    if (next === this.pollDelay) {
      this.poll?.refresh(); // the same Timeout re-armed: a steady poll allocates nothing
      return;
    }
    this.pollDelay = next;
    if (this.poll !== null) clearTimeout(this.poll);
    this.poll = setTimeout(() => this.onPoll(), next);
  }

  /** Activity after an idle stretch: the fallback poll (rotation, done marker) returns to `pollMs`. */
  private pollSoon(): void {
    if (this.pollDelay <= this.opts.pollMs || this.poll === null) return;
    this.pollDelay = this.opts.pollMs;
    clearTimeout(this.poll);
    this.poll = setTimeout(() => this.onPoll(), this.pollDelay);
  }

  stop(): void {
    this.stopped = true;
    if (this.poll !== null) clearTimeout(this.poll);
    this.poll = null;
    if (this.quiet !== null) clearTimeout(this.quiet);
    this.unwatch();
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  /** Downstream has room again: continue if backpressure had paused reading. */
  resume(): void {
    if (this.paused) this.nudge();
  }

  /** Schedules a read soon (coalescing bursts of events into one wake-up). */
  nudge(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.wake(false);
    });
  }

  /** A change event: read now, then batch further data by polling until a poll comes back empty. */
  private onChange(): void {
    if (this.quietMs() <= 0) {
      this.nudge();
      return;
    }
    this.unwatch();
    this.batching = true;
    this.nudge();
    this.armQuiet();
  }

  private quietMs(): number {
    return this.opts.quietMs;
  }

  private armQuiet(): void {
    if (this.quietArmed || this.stopped) return;
    this.quietArmed = true;
    // One Timeout object re-armed with refresh(): a tick costs no timer allocation.
    if (this.quiet === null) this.quiet = setTimeout(() => this.onQuiet(), this.opts.quietMs);
    else this.quiet.refresh();
  }

  private onQuiet(): void {
    this.quietArmed = false;
    const before = this.readBytes;
    this.wake(false);
    this.emptyPolls = this.readBytes === before ? this.emptyPolls + 1 : 0;
    if (this.emptyPolls < IDLE_POLLS) return this.armQuiet();
    this.emptyPolls = 0;
    this.batching = false;
    this.watch();
    // Data written between the empty read and the re-armed watcher would otherwise wait for a poll.
    this.wake(false);
    if (this.readBytes !== before) this.onChange();
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private watch(): void {
    if (this.watcher !== null || this.stopped) return;
    const base = path.basename(this.opts.path);
    const doneBase = this.opts.doneFile === null ? null : path.basename(this.opts.doneFile);
    try {
      this.watcher = fs.watch(path.dirname(this.opts.path), (event, name) => {
        if (name === base || name === doneBase || name === null) {
          this.watcherTrusted = true;
          this.pollSoon();
          if (event === 'rename') setImmediate(() => this.wake(true));
          else this.onChange();
        }
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null; // directory missing: polling covers it and retries the watch
    }
  }

  /** `full`: also check the path for rotation and the done marker (on rename events and polls). */
  wake(full: boolean): void {
    if (this.stopped || this.done) return;
    if (this.watcher === null && !this.batching) this.watch();
    const doneSeen = full && this.opts.doneFile !== null && fs.existsSync(this.opts.doneFile);
    if (this.fd === null && !this.open()) {
      if (doneSeen) this.finish();
      // Still a wake-up downstream: it is where acknowledgements of resent records get read.
      else this.opts.sink.endOfRead();
      return;
    }
    if (full) this.checkRotation();
    const drained = this.drain();
    this.opts.sink.endOfRead();
    if (doneSeen && drained) this.finish();
  }

  private open(): boolean {
    let fd: number;
    try {
      fd = fs.openSync(this.opts.path, 'r');
    } catch {
      return false;
    }
    const st = fs.fstatSync(fd);
    this.fd = fd;
    this.ino = st.ino;
    const s = this.opts.start;
    this.pos = s.ino === st.ino && st.size >= s.pos ? s.pos : 0;
    this.opts.start = { ino: null, pos: 0 }; // a saved position applies to the first open only
    return true;
  }

  private checkRotation(): void {
    const st = fs.statSync(this.opts.path, { throwIfNoEntry: false });
    if (st === undefined || st.ino === this.ino || this.fd === null) return;
    // Paused by backpressure: the old file is not read to its end yet, and closing it would lose that.
    if (!this.drain()) return;
    this.opts.sink.fileEnded();
    fs.closeSync(this.fd);
    this.fd = null;
    this.open();
  }

  /** Reads to the end of the file; false if backpressure stopped it early. */
  private drain(): boolean {
    const fd = this.fd;
    if (fd === null) return true;
    this.paused = false;
    for (let first = true; ; first = false) {
      if (!this.opts.sink.canRead()) {
        this.paused = true;
        return false;
      }
      const n = fs.readSync(fd, this.buf, 0, CHUNK, this.pos);
      if (n === 0) {
        // Nothing new: was the file truncated under us (copytruncate)? Then start over.
        if (first && fs.fstatSync(fd).size < this.pos) {
          this.opts.sink.reset();
          this.pos = 0;
          continue;
        }
        return true;
      }
      this.pos += n;
      this.readBytes += n;
      this.opts.sink.bytes(this.buf, 0, n, this.pos, this.ino);
      // A short read of a regular file means its end: skip the read that would return 0.
      if (n < CHUNK) return true;
    }
  }

  private finish(): void {
    this.done = true;
    // Nothing more to read: no poll or watcher event needs to wake the process any more.
    if (this.poll !== null) clearTimeout(this.poll);
    this.poll = null;
    this.unwatch();
    this.opts.sink.fileEnded();
    this.opts.sink.finished();
  }
}

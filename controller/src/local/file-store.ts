/**
 * The local mode's on-disk store (under `.optimus/`): the runtime document, written
 * atomically and durably (temp file, fsync, rename, fsync of the directory), and an append-only
 * log of accepted records written synchronously before the runtime acts on them
 * (`file-store-log.ts`) — a controller killed at any moment restarts with every job and every
 * observation it had acknowledged.
 *
 * Everything read back is checked (`file-store-schema.ts`, ADR 0032): a damaged `state.json`
 * stops the start with an error naming the file and a way out; damage in the log is repaired or
 * quarantined, counted and said. The document also records how many records the log held, so a
 * log that lost lines while no controller ran is noticed at the next start.
 *
 * Records carry their job's incarnation. The log is rewritten (atomically) only to drop the
 * records of removed jobs: on {@link FileStore.purgeJob}, and on load for whatever a crash
 * before the purge left behind.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimeDocument, StateStore, StoredRecord } from '../runtime/backend';
import { isOwnRecord } from '../runtime/job-record';
import { jobIdOf } from '../runtime/job-spec';
import { writeFileDurable, writeFileDurableAsync } from './file-store-fsync';
import { RecordLog, type LogIntegrityEvent } from './file-store-log';
import { parseStateDocument } from './file-store-schema';

const jobOf = (r: StoredRecord): string => `${r.task.namespace}/${r.task.job}`;

/** Damage found or repaired, as counters (also each said once through `onIntegrity`). */
export interface StoreIntegrity {
  /** Bytes of a torn last line cut off at start (a kill during an append; never acknowledged). */
  tornTailBytes: number;
  /** Lines of the log that were not records, moved to `records.quarantined.jsonl`. */
  quarantinedLines: number;
  /** Records the document said the log held that were missing from it at start. */
  missingAtStart: number;
  /** Records cut from the log by someone else while this store ran. */
  lostUnderUs: number;
  /** Times the log was removed or replaced by someone else and restored from the open descriptor. */
  restored: number;
}

export type StoreIntegrityEvent =
  LogIntegrityEvent | { readonly kind: 'missing-at-start'; readonly file: string; readonly missing: number };

export interface FileStoreOptions {
  /** Told about every repair or loss (the composition root logs it). */
  readonly onIntegrity?: (e: StoreIntegrityEvent) => void;
  /** What a person should run when `state.json` cannot be read (named in the error). */
  readonly recovery?: string;
}

const DEFAULT_RECOVERY =
  "Move it aside to keep it for inspection, or start afresh with `npm start -- --fresh` (which discards this run's state).";

export class FileStore implements StateStore {
  private readonly docPath: string;
  private readonly log: RecordLog;
  private saving: Promise<void> = Promise.resolve();
  private lastDoc: RuntimeDocument | null = null;
  readonly integrity: StoreIntegrity = {
    tornTailBytes: 0,
    quarantinedLines: 0,
    missingAtStart: 0,
    lostUnderUs: 0,
    restored: 0,
  };

  constructor(
    dir: string,
    private readonly o: FileStoreOptions = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.docPath = join(dir, 'state.json');
    this.log = new RecordLog(join(dir, 'records.jsonl'), (e) => this.said(e));
  }

  async load(): Promise<{ doc: RuntimeDocument | null; records: StoredRecord[] }> {
    const parsed = existsSync(this.docPath)
      ? parseStateDocument(
          readFileSync(this.docPath, 'utf8'),
          this.docPath,
          this.o.recovery ?? DEFAULT_RECOVERY,
        )
      : null;
    const scan = this.log.scan();
    const all = scan.records;
    if (parsed?.storedRecords != null && scan.lines < parsed.storedRecords)
      this.said({
        kind: 'missing-at-start',
        file: this.log.path,
        missing: parsed.storedRecords - scan.lines,
      });
    // Without a document nothing says which jobs exist: keep everything.
    if (parsed === null) return { doc: null, records: all };
    const { doc } = parsed;
    this.lastDoc = doc;
    const jobs = new Map(doc.jobs.map((j) => [jobIdOf(j.spec), j]));
    const records = all.filter((r) => {
      const job = jobs.get(jobOf(r));
      return job !== undefined && isOwnRecord(job, r);
    });
    if (records.length < all.length) this.rewrite(records);
    else if (records.length !== parsed.storedRecords) this.resave();
    return { doc, records };
  }

  appendRecord(r: StoredRecord): void {
    this.log.append(r);
  }

  /**
   * Appends survive a controller crash as soon as `writeSync` returns (they are in the page cache);
   * this makes them survive a host crash too (`fdatasync`), once per watermark interval rather than
   * once per record — and checks that the log is still the file we append to.
   */
  async durable(): Promise<boolean> {
    await this.log.durable();
    return true;
  }

  /**
   * Drops the records of `jobId` at `incarnation` (and its records without one). Synchronous, like
   * the appends, so no append can fall between the read and the rename.
   */
  purgeJob(jobId: string, incarnation: string | undefined): void {
    const all = this.log.scan().records;
    const kept = all.filter(
      (r) => jobOf(r) !== jobId || (r.incarnation !== undefined && r.incarnation !== incarnation),
    );
    if (kept.length < all.length) this.rewrite(kept);
  }

  saveDocument(doc: RuntimeDocument): Promise<void> {
    this.lastDoc = doc;
    // Saves are serialised so an older document never overwrites a newer one.
    // One failed save must not fail every later one: each reports its own error.
    this.saving = this.saving
      .catch(() => undefined)
      .then(() =>
        // The count as of the write: every record appended before it is in the log.
        writeFileDurableAsync(this.docPath, JSON.stringify({ ...doc, storedRecords: this.log.lines })),
      );
    return this.saving;
  }

  async close(): Promise<void> {
    await this.saving.catch(() => undefined);
    this.log.close();
  }

  private rewrite(records: readonly StoredRecord[]): void {
    this.log.rewrite(records);
    // The document's count must follow, or the next start would report the dropped lines missing.
    this.resave();
  }

  /** Saves the last document again with the current count; a failure is retried by the next save. */
  private resave(): void {
    if (this.lastDoc) this.saveDocument(this.lastDoc).catch(() => undefined);
  }

  private said(e: StoreIntegrityEvent): void {
    const i = this.integrity;
    if (e.kind === 'torn-tail') i.tornTailBytes += e.bytes;
    else if (e.kind === 'quarantined') i.quarantinedLines += e.lines.length;
    else if (e.kind === 'missing-at-start') i.missingAtStart += e.missing;
    else if (e.kind === 'truncated') i.lostUnderUs += e.lostRecords;
    else i.restored += 1;
    this.o.onIntegrity?.(e);
  }
}

/** Writes a small JSON file atomically and durably (used for the broker port and similar facts). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileDurable(path, JSON.stringify(value));
}

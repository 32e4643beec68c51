/**
 * The local mode's on-disk store (under `.optimus/`): the runtime document, written
 * atomically (temp file + rename), and an append-only log of accepted records written
 * synchronously before the runtime acts on them — a controller killed at any moment
 * restarts with every job and every observation it had acknowledged.
 *
 * Records carry their job's incarnation. The log is rewritten (atomically) only to drop the
 * records of removed jobs: on {@link FileStore.purgeJob}, and on load for whatever a crash
 * before the purge left behind.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeDocument, StateStore, StoredRecord } from '../runtime/backend';
import { isOwnRecord } from '../runtime/job-record';
import { jobIdOf } from '../runtime/job-spec';

const jobOf = (r: StoredRecord): string => `${r.task.namespace}/${r.task.job}`;

export class FileStore implements StateStore {
  private readonly docPath: string;
  private readonly recordsPath: string;
  private saving: Promise<void> = Promise.resolve();
  /** The records log, kept open for appends (one write per record, no open/close). */
  private fd: number | null = null;
  private size = 0;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.docPath = join(dir, 'state.json');
    this.recordsPath = join(dir, 'records.jsonl');
  }

  async load(): Promise<{ doc: RuntimeDocument | null; records: StoredRecord[] }> {
    const doc = existsSync(this.docPath)
      ? (JSON.parse(readFileSync(this.docPath, 'utf8')) as RuntimeDocument)
      : null;
    const all = this.readRecords();
    // Without a document nothing says which jobs exist: keep everything.
    if (doc === null) return { doc, records: all };
    const jobs = new Map(doc.jobs.map((j) => [jobIdOf(j.spec), j]));
    const records = all.filter((r) => {
      const job = jobs.get(jobOf(r));
      return job !== undefined && isOwnRecord(job, r);
    });
    if (records.length < all.length) this.rewrite(records);
    return { doc, records };
  }

  appendRecord(r: StoredRecord): void {
    if (this.fd === null) {
      this.fd = openSync(this.recordsPath, 'a');
      this.size = fstatSync(this.fd).size;
    }
    const line = Buffer.from(`${JSON.stringify(r)}\n`);
    let n = 0;
    try {
      n = writeSync(this.fd, line);
    } finally {
      // A failed or short write (disk full) must not leave half a line for the next append to glue
      // onto: cut the log back to its last whole line. The caller counts the record as not stored.
      if (n !== line.length) ftruncateSync(this.fd, this.size);
    }
    if (n !== line.length)
      throw new Error(`short write to ${this.recordsPath} (${n} of ${line.length} bytes)`);
    this.size += n;
  }

  /**
   * Appends survive a controller crash as soon as `writeSync` returns (they are in the page cache);
   * this makes them survive a host crash too (`fdatasync`), once per watermark interval rather than
   * once per record.
   */
  durable(): Promise<boolean> {
    const fd = this.fd;
    if (fd === null) return Promise.resolve(true);
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve(true))));
  }

  /**
   * Drops the records of `jobId` at `incarnation` (and its records without one). Synchronous, like
   * the appends, so no append can fall between the read and the rename.
   */
  purgeJob(jobId: string, incarnation: string | undefined): void {
    const all = this.readRecords();
    const kept = all.filter(
      (r) => jobOf(r) !== jobId || (r.incarnation !== undefined && r.incarnation !== incarnation),
    );
    if (kept.length < all.length) this.rewrite(kept);
  }

  saveDocument(doc: RuntimeDocument): Promise<void> {
    // Saves are serialised so an older document never overwrites a newer one.
    this.saving = this.saving.then(async () => {
      const tmp = `${this.docPath}.tmp`;
      await writeFile(tmp, JSON.stringify(doc));
      renameSync(tmp, this.docPath);
    });
    return this.saving;
  }

  async close(): Promise<void> {
    await this.saving;
    this.closeLog();
  }

  private closeLog(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private readRecords(): StoredRecord[] {
    const records: StoredRecord[] = [];
    if (!existsSync(this.recordsPath)) return records;
    const text = readFileSync(this.recordsPath, 'utf8');
    // Close a torn last line so the next append starts on a line of its own.
    if (text !== '' && !text.endsWith('\n')) appendFileSync(this.recordsPath, '\n');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as StoredRecord);
      } catch {
        // Only the last line can be torn (a kill during the append); it was never acted on.
      }
    }
    return records;
  }

  /** Replaces the log atomically: a kill leaves either the old log or the new one. */
  private rewrite(records: readonly StoredRecord[]): void {
    // The kept descriptor would point at the replaced file: appends reopen the new one.
    this.closeLog();
    writeJsonLinesAtomic(this.recordsPath, records);
  }
}

function writeJsonLinesAtomic(path: string, values: readonly unknown[]): void {
  writeFileSync(`${path}.tmp`, values.map((v) => `${JSON.stringify(v)}\n`).join(''));
  renameSync(`${path}.tmp`, path);
}

/** Writes a small JSON file atomically (used for the broker port and similar facts). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

/**
 * The local mode's on-disk store (under `.optimus/`): the runtime document, written
 * atomically (temp file + rename), and an append-only log of accepted records written
 * synchronously before the runtime acts on them — a controller killed at any moment
 * restarts with every job and every observation it had acknowledged.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeDocument, StateStore, StoredRecord } from '../runtime/backend';

export class FileStore implements StateStore {
  private readonly docPath: string;
  private readonly recordsPath: string;
  private saving: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.docPath = join(dir, 'state.json');
    this.recordsPath = join(dir, 'records.jsonl');
  }

  async load(): Promise<{ doc: RuntimeDocument | null; records: StoredRecord[] }> {
    const doc = existsSync(this.docPath)
      ? (JSON.parse(readFileSync(this.docPath, 'utf8')) as RuntimeDocument)
      : null;
    const records: StoredRecord[] = [];
    if (existsSync(this.recordsPath)) {
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
    }
    return { doc, records };
  }

  appendRecord(r: StoredRecord): void {
    appendFileSync(this.recordsPath, `${JSON.stringify(r)}\n`);
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
  }
}

/** Writes a small JSON file atomically (used for the broker port and similar facts). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

/**
 * Durable small-file writes for the local store (ADR 0032): write a temporary file, fsync it,
 * rename it over the target, fsync the directory. Without the first fsync a host crash can leave
 * the renamed file empty (the rename reached the disk before the data); without the second the
 * rename itself may not survive.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/** fsync of a directory: makes the creation, rename or removal of its entries durable. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `path` with `data` atomically and durably (synchronous). */
export function writeFileDurable(path: string, data: string | Buffer, mode = 0o644): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDirectory(dirname(path));
}

/** {@link writeFileDurable} without blocking the event loop on the writes and fsyncs. */
export async function writeFileDurableAsync(path: string, data: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const handle = await open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Where the shared log may go (ADR 0038): never over a system directory or the image's code. */
import { posix } from 'node:path';
import { ANNOTATION_LOG_PATH, LOG_PATH } from '../api/names';

/** The log path of the annotation, or why it cannot be used. */
export function logPathOf(
  annotations: Readonly<Record<string, string>>,
): { ok: true; path: string } | { ok: false; why: string } {
  const raw = annotations[ANNOTATION_LOG_PATH] ?? LOG_PATH;
  const path = posix.normalize(raw);
  const dir = posix.dirname(path);
  if (!posix.isAbsolute(raw) || dir === '/' || path.endsWith('/'))
    return {
      ok: false,
      why: `${ANNOTATION_LOG_PATH} "${raw}" must be an absolute file path below a directory other than /`,
    };
  if (/^\/(proc|sys|dev|etc|bin|sbin|usr|lib|lib64|boot)(\/|$)/.test(dir))
    return { ok: false, why: `${ANNOTATION_LOG_PATH} "${raw}" is in a system directory` };
  return { ok: true, path };
}

/**
 * Directories an image is likely to hold its code or runtime in (ADR 0038): an emptyDir mounted
 * at one of them, or at a parent of the container's `workingDir`, hides what the image put there.
 * A subdirectory (`/app/logs`) is fine: at worst it hides that subdirectory.
 */
export const IMAGE_DIRS: readonly string[] = [
  '/app',
  '/workspace',
  '/opt',
  '/srv',
  '/home',
  '/root',
  '/code',
  '/src',
  '/data',
  '/var',
];

/** Why an emptyDir at `dir` would hide the image's files, or null. */
export function hidesImageFiles(dir: string, workingDir: string | undefined): string | null {
  if (IMAGE_DIRS.includes(dir)) return `${dir}, where images keep their code`;
  if (workingDir !== undefined && posix.isAbsolute(workingDir)) {
    const wd = posix.normalize(workingDir).replace(/(.)\/$/, '$1');
    if (wd === dir || wd.startsWith(`${dir}/`)) return `the container's workingDir ${wd}`;
  }
  return null;
}

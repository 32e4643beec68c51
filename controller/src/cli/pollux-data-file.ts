/**
 * File-reading edge of the all-reduce data parser (the pure parser is `models/speed/pollux-data.ts`).
 * A directory holds one sub-directory per model with `placements.csv` (required) and
 * `scalability.csv` (optional); a path to one `placements.csv` reads that model alone (named after
 * its directory).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  parsePolluxPlacements,
  parsePolluxScalability,
  type AllReduceData,
  type AllReduceJob,
} from '../models/speed/pollux-data';

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}

function parsed<T>(path: string, parse: (text: string) => T, text: string): T {
  try {
    return parse(text);
  } catch (err) {
    throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function jobAt(dir: string): Promise<AllReduceJob> {
  const placements = join(dir, 'placements.csv');
  const scalability = join(dir, 'scalability.csv');
  const configurations = parsed(placements, parsePolluxPlacements, await readText(placements));
  const beyond = (await exists(scalability))
    ? parsed(scalability, parsePolluxScalability, await readText(scalability))
    : [];
  return { model: basename(dir), configurations, beyond };
}

/** True when the path is all-reduce data: a directory, or a CSV whose header starts with `placement`. */
export async function isAllReduceData(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return false;
  if (info.isDirectory()) return true;
  const head = (await readText(path)).slice(0, 200).split(/\r?\n/)[0] ?? '';
  return head.split(',')[0]?.trim() === 'placement';
}

/** Reads all-reduce data: a directory of `<model>/placements.csv`, or one placements.csv. */
export async function loadAllReduceData(path: string): Promise<AllReduceData> {
  const info = await stat(path).catch((err: unknown) => {
    throw new Error(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  });
  if (!info.isDirectory()) return { jobs: [await jobAt(dirname(path))] };
  const entries = await readdir(path, { withFileTypes: true });
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => join(path, e.name))
    .sort();
  const withData = [];
  for (const dir of dirs) if (await exists(join(dir, 'placements.csv'))) withData.push(dir);
  if (withData.length === 0) throw new Error(`${path}: no <model>/placements.csv below it`);
  return { jobs: await Promise.all(withData.map(jobAt)) };
}

/** File-reading edge of the measured-speed parser (the pure parser lives in `models/speed`). */
import { readFile } from 'node:fs/promises';
import { parseMeasuredSpeeds, type MeasuredData } from '../models/speed/measured-data';

/** Reads and parses a measured-speed CSV; errors name the file. */
export async function loadMeasuredSpeeds(path: string): Promise<MeasuredData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  try {
    return parseMeasuredSpeeds(text);
  } catch (err) {
    throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

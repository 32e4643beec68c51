/** Parsing of a loss history CSV for `predict convergence` (columns `step,loss`, any order, extra columns ignored). Pure. */
import type { LossPoint } from './types';

export interface ParsedLossCsv {
  readonly points: LossPoint[];
  /** Data rows rejected (non-numeric or missing fields), with the first few line numbers for the message. */
  readonly rejected: number;
  readonly rejectedLines: number[];
}

/**
 * Parses the CSV text. Throws when the header lacks a `step` or `loss` column; bad data rows are counted
 * and skipped so one garbled line does not hide a whole history.
 */
export function parseLossCsv(text: string): ParsedLossCsv {
  const lines = text.split(/\r?\n/);
  const headerIndex = lines.findIndex((l) => l.trim() !== '');
  const header = (lines[headerIndex] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const stepCol = header.indexOf('step');
  const lossCol = header.indexOf('loss');
  if (stepCol < 0 || lossCol < 0) {
    throw new Error(`the CSV header must name the columns "step" and "loss", got "${header.join(',')}"`);
  }
  const points: LossPoint[] = [];
  const rejectedLines: number[] = [];
  let rejected = 0;
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    const cells = line.split(',');
    const step = Number(cells[stepCol]?.trim() ?? '');
    const loss = Number(cells[lossCol]?.trim() ?? '');
    const stepCell = cells[stepCol]?.trim() ?? '';
    const lossCell = cells[lossCol]?.trim() ?? '';
    if (stepCell === '' || lossCell === '' || !Number.isFinite(step) || !Number.isFinite(loss) || step < 0) {
      rejected++;
      if (rejectedLines.length < 5) rejectedLines.push(i + 1);
      continue;
    }
    points.push({ step, loss });
  }
  return { points, rejected, rejectedLines };
}

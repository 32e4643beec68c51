/**
 * Figures of the fault suite (faults survived, records sent / received / lost / seq reused), appended
 * as JSON lines to `$OPTIMUS_FAULTS_TALLY` when set, so CI and the README can quote what was measured.
 */
import { appendFileSync } from 'node:fs';

export interface FaultFigures {
  readonly row: string;
  readonly sent: number;
  readonly received: number;
  readonly lost: number;
  readonly reused: number;
}

export function recordFault(f: FaultFigures): void {
  const file = process.env['OPTIMUS_FAULTS_TALLY'];
  if (file) appendFileSync(file, `${JSON.stringify({ ...f, at: new Date().toISOString() })}\n`);
}

/**
 * Whether a state directory holds a run that has finished: every job of the workload was
 * submitted and is done or failed. Starting the same workload again there would submit nothing
 * and just sit; the CLI starts a new run instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimeDocument } from '../runtime/backend';
import type { WorkloadJob } from './demo-workload';
import { parseStateDocument } from './file-store-schema';

export function finishedRun(stateDir: string, workload: readonly WorkloadJob[]): { jobs: number } | null {
  const file = join(stateDir, 'store', 'state.json');
  if (!existsSync(file)) return null;
  let doc: RuntimeDocument;
  try {
    doc = parseStateDocument(readFileSync(file, 'utf8'), file, '').doc;
  } catch {
    return null; // the store itself reports a broken document when the run starts
  }
  const jobs = new Map(doc.jobs.map((j) => [`${j.spec.namespace}/${j.spec.name}`, j.phase]));
  const all = workload.every((w) => {
    const phase = jobs.get(`${w.spec.namespace ?? 'default'}/${w.spec.name}`);
    return phase === 'done' || phase === 'failed';
  });
  return all && jobs.size > 0 ? { jobs: jobs.size } : null;
}

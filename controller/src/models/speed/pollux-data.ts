/**
 * Parser of Pollux's per-placement throughput tables (`test/data/pollux/<model>/placements.csv`,
 * and the even multi-node `scalability.csv`; see test/data/pollux/README.md). Pure: takes CSV text;
 * the directory-reading edge is `controller/src/cli/pollux-data-file.ts`.
 * placements.csv: placement,local_bsz,step_time,sync_time — `placement` lists the GPUs used on each
 * node, one digit per node ("1234": 4 nodes, 10 GPUs); `step_time` is seconds per synchronous step.
 * scalability.csv: num_nodes,num_replicas,local_bsz,step_time,sync_time.
 */

/** One measured configuration of an all-reduce job. */
export interface AllReduceConfiguration {
  /** The placement as measured ("22": two nodes of two GPUs), or "<nodes>x<gpus>" for scalability rows. */
  readonly placement: string;
  readonly workers: number;
  readonly servers: number;
  /** Samples per GPU per step. */
  readonly localBatch: number;
  /** 1 / step_time. */
  readonly stepsPerSec: number;
}

export interface AllReduceJob {
  readonly model: string;
  readonly configurations: readonly AllReduceConfiguration[];
  /** Configurations on more nodes than any placement row (scalability.csv), scored as extrapolation. */
  readonly beyond: readonly AllReduceConfiguration[];
}

export interface AllReduceData {
  readonly jobs: readonly AllReduceJob[];
}

/** Workers and servers of a placement string ("1234" → 10 GPUs on 4 nodes; digits 1–9, 0 = unused). */
export function placementShape(placement: string): { workers: number; servers: number } {
  if (!/^[0-9]+$/.test(placement))
    throw new Error(`placement must be digits (GPUs per node), got "${placement}"`);
  const counts = [...placement].map(Number).filter((c) => c > 0);
  if (counts.length === 0) throw new Error(`placement "${placement}" uses no GPU`);
  return { workers: counts.reduce((a, b) => a + b, 0), servers: counts.length };
}

interface Table {
  readonly header: readonly string[];
  readonly rows: readonly { readonly cells: readonly string[]; readonly line: number }[];
}

function tableOf(text: string, required: readonly string[], what: string): Table {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((h) => h.trim());
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length > 0) throw new Error(`${what}: header lacks column(s) ${missing.join(', ')}`);
  const rows = lines
    .map((l, i) => ({ cells: l.split(',').map((c) => c.trim()), line: i + 1 }))
    .slice(1)
    .filter((r) => r.cells.some((c) => c !== ''));
  return { header, rows };
}

function positiveNumber(text: string | undefined, column: string, line: number): number {
  const v = Number(text);
  if (text === undefined || text === '' || !(v > 0 && v < Infinity))
    throw new Error(`line ${line}: ${column} must be a positive number, got "${text ?? ''}"`);
  return v;
}

/** Parses placements.csv text. Throws naming the line and column of the first bad row. */
export function parsePolluxPlacements(text: string): AllReduceConfiguration[] {
  const t = tableOf(text, ['placement', 'local_bsz', 'step_time'], 'placements');
  const col = (name: string): number => t.header.indexOf(name);
  return t.rows.map(({ cells, line }) => {
    const placement = cells[col('placement')] ?? '';
    let shape: { workers: number; servers: number };
    try {
      shape = placementShape(placement);
    } catch (err) {
      throw new Error(`line ${line}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const localBatch = positiveNumber(cells[col('local_bsz')], 'local_bsz', line);
    const stepTime = positiveNumber(cells[col('step_time')], 'step_time', line);
    return { placement, ...shape, localBatch, stepsPerSec: 1 / stepTime };
  });
}

/** Parses scalability.csv text (even placements on many nodes). */
export function parsePolluxScalability(text: string): AllReduceConfiguration[] {
  const t = tableOf(text, ['num_nodes', 'num_replicas', 'local_bsz', 'step_time'], 'scalability');
  const col = (name: string): number => t.header.indexOf(name);
  return t.rows.map(({ cells, line }) => {
    const servers = positiveNumber(cells[col('num_nodes')], 'num_nodes', line);
    const workers = positiveNumber(cells[col('num_replicas')], 'num_replicas', line);
    if (!Number.isInteger(servers) || !Number.isInteger(workers) || servers > workers)
      throw new Error(`line ${line}: num_nodes and num_replicas must be integers with nodes ≤ replicas`);
    const localBatch = positiveNumber(cells[col('local_bsz')], 'local_bsz', line);
    const stepTime = positiveNumber(cells[col('step_time')], 'step_time', line);
    return { placement: `${servers}x${workers}`, workers, servers, localBatch, stepsPerSec: 1 / stepTime };
  });
}

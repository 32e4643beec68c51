/**
 * Genuine MXNet log lines (python/mxnet/callback.py Speedometer, module/base_module.py fit(),
 * model.py save_checkpoint), with the `%(asctime)-15s Node[%d]` prefix of MXNet's example scripts.
 */

const asctime = (d: Date): string => {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())},${p(d.getMilliseconds(), 3)}`;
};

const prefix = (rank: number, at: Date): string => `${asctime(at)} Node[${rank}] `;

/** `Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec\t%s=%f` (MXNet ≥ 1.4). */
export function speedometerLine(o: {
  rank: number;
  at: Date;
  epoch: number;
  from: number;
  to: number;
  samplesPerSec: number;
  loss: number;
}): string {
  return `${prefix(o.rank, o.at)}Epoch[${o.epoch}] Batch [${o.from}-${o.to}]\tSpeed: ${o.samplesPerSec.toFixed(2)} samples/sec\tcross-entropy=${o.loss.toFixed(6)}`;
}

/** `Epoch[%d] Train-cross-entropy=%f` */
export function trainMetricLine(o: { rank: number; at: Date; epoch: number; loss: number }): string {
  return `${prefix(o.rank, o.at)}Epoch[${o.epoch}] Train-cross-entropy=${o.loss.toFixed(6)}`;
}

/** `Epoch[%d] Time cost=%.3f` */
export function timeCostLine(o: { rank: number; at: Date; epoch: number; seconds: number }): string {
  return `${prefix(o.rank, o.at)}Epoch[${o.epoch}] Time cost=${o.seconds.toFixed(3)}`;
}

/** `Saved checkpoint to "%s"` */
export function checkpointLine(o: { rank: number; at: Date; path: string }): string {
  return `${prefix(o.rank, o.at)}Saved checkpoint to "${o.path}"`;
}

/** What a worker prints when it (re)starts: MXNet's `Start training with %s`, plus where it resumes. */
export function startLine(o: { rank: number; at: Date; ps: number; workers: number; step: number }): string {
  return `${prefix(o.rank, o.at)}Start training with [cpu(0)] (dist_sync: ${o.ps} servers, ${o.workers} workers, resuming at step ${o.step})`;
}

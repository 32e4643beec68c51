/** Where one local job's files live: logs, done markers, checkpoint, sidecar state. */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class JobFiles {
  /** Every worker log under `root`, with the job it belongs to (directories are `namespace__name`). */
  static scan(root: string): { namespace: string; name: string; files: JobFiles; index: number }[] {
    if (!existsSync(root)) return [];
    return readdirSync(root).flatMap((d) => {
      const [namespace, name] = d.split('__');
      if (!namespace || !name) return [];
      const files = new JobFiles(root, `${namespace}/${name}`);
      return readdirSync(files.dir).flatMap((f) => {
        const m = /^worker-(\d+)\.log$/.exec(f);
        return m ? [{ namespace, name, files, index: Number(m[1]) }] : [];
      });
    });
  }

  /** Deletes everything kept for `jobId` (an earlier job of the same name). */
  static clear(root: string, jobId: string): void {
    rmSync(JobFiles.dirOf(root, jobId), { recursive: true, force: true });
  }

  private static dirOf(root: string, jobId: string): string {
    return join(root, jobId.replace('/', '__'));
  }

  readonly dir: string;
  readonly sidecarState: string;

  constructor(root: string, jobId: string) {
    this.dir = JobFiles.dirOf(root, jobId);
    this.sidecarState = join(this.dir, 'sidecar-state');
    mkdirSync(this.sidecarState, { recursive: true });
  }

  log(index: number): string {
    return join(this.dir, `worker-${index}.log`);
  }
  doneMarker(index: number): string {
    return join(this.dir, `worker-${index}.done`);
  }
  get checkpoint(): string {
    return join(this.dir, 'checkpoint.json');
  }
  stderr(what: string): string {
    return join(this.dir, `${what}.stderr.log`);
  }

  private sidecarStateFile(index: number): string {
    return join(this.sidecarState, `worker-${index}.log.optimus-state.json`);
  }

  /**
   * Seeds the sidecar's state so its sequence numbers start at 0 for this task: then the
   * sidecar's `nextSeq` is exactly how many records it sent, which the e2e checks compare
   * against what the controller received.
   */
  seedSidecarState(index: number): void {
    const f = this.sidecarStateFile(index);
    if (!existsSync(f))
      writeFileSync(f, JSON.stringify({ v: 1, ino: null, pos: 0, nextSeq: 0, ackedSeq: -1 }));
  }

  /** Records each worker's sidecar numbered (sent), by worker index. */
  sentCounts(): Map<number, number> {
    const out = new Map<number, number>();
    for (const f of readdirSync(this.sidecarState)) {
      const m = /^worker-(\d+)\.log\.optimus-state\.json$/.exec(f);
      if (!m) continue;
      try {
        const s = JSON.parse(readFileSync(join(this.sidecarState, f), 'utf8')) as { nextSeq?: unknown };
        if (typeof s.nextSeq === 'number') out.set(Number(m[1]), s.nextSeq);
      } catch {
        // A torn write cannot happen (rename), but a foreign file may: skip it.
      }
    }
    return out;
  }
}

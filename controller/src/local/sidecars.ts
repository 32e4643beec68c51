/**
 * The real sidecar bundle beside each local worker: started with the task, told to drain (the done
 * marker) when the task stops, and after a crash of the previous controller, run once more over
 * every leftover worker log so that what its outbox still held is delivered.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import type { JobSpec } from '../runtime/job-spec';
import { perWorkerBatch } from '../runtime/job-spec';
import { JobFiles } from './job-files';
import type { PidRegistry } from './processes';
import { awaitOrStop, type Spawned } from './processes';
import {
  DRAIN_CONFIRM_WAIT_SEC,
  LOCAL_CONFIRM_WAIT_SEC,
  spawnSidecar,
  type SidecarSettings,
} from './sidecar-process';

/**
 * How long a draining sidecar is waited for before it is stopped: beyond its own confirmation wait
 * (it never leaves earlier with unconfirmed records while the controller lives, ADR 0029), plus time
 * to reconnect to a restarted broker and to send what it holds.
 */
const DRAIN_WAIT_MS = (LOCAL_CONFIRM_WAIT_SEC + 15) * 1000;
const LEFTOVER_WAIT_MS = (DRAIN_CONFIRM_WAIT_SEC + 10) * 1000;

export interface LocalSidecarsOptions {
  readonly settings: SidecarSettings;
  /** Root of job directories (under `.optimus/`). */
  readonly root: string;
  readonly pids: PidRegistry;
  /** Marks our processes (environment) so orphans can be recognised after a crash. */
  readonly marker: string;
  readonly onError: (err: unknown) => void;
}

export class LocalSidecars {
  constructor(private readonly o: LocalSidecarsOptions) {}

  /** The sidecar of worker `index` of a job running `workers` workers. */
  start(spec: JobSpec, files: JobFiles, index: number, workers: number): Spawned {
    files.seedSidecarState(index);
    // The one definition of a worker's batch (runtime/batch.ts), as the pods get it.
    return this.spawn({
      namespace: spec.namespace,
      name: spec.name,
      files,
      index,
      perWorkerBatch: perWorkerBatch(spec, workers),
    });
  }

  /**
   * Drains: the done marker makes it read the log to its end, deliver and exit once the controller
   * confirmed everything (or had its wait, ADR 0029); stopped if it takes longer than that.
   */
  async stop(files: JobFiles, index: number, sidecar: Spawned): Promise<void> {
    writeFileSync(files.doneMarker(index), '');
    await awaitOrStop(sidecar, DRAIN_WAIT_MS);
  }

  /**
   * After a crash of the previous controller: every worker log of every job directory gets a
   * short-lived sidecar with the done marker set, which resends what its outbox still holds and
   * reads the log to its end, then exits. Run before the first round so no two sidecars ever
   * share a task's state.
   */
  async drainLeftovers(): Promise<number> {
    const drains: Promise<number>[] = [];
    for (const { namespace, name, files, index } of JobFiles.scan(this.o.root)) {
      // The sidecar (as of this writing) saves its read position only after reading some bytes;
      // one line of ours makes sure it does, so the next sidecar of the task resumes, not re-reads.
      appendFileSync(
        files.log(index),
        `${new Date().toISOString()} optimus-local: controller restarted; delivering the rest of this log\n`,
      );
      writeFileSync(files.doneMarker(index), '');
      const s = this.spawn({
        namespace,
        name,
        files,
        index,
        perWorkerBatch: 1,
        confirmWaitSec: DRAIN_CONFIRM_WAIT_SEC,
      });
      drains.push(awaitOrStop(s, LEFTOVER_WAIT_MS));
    }
    await Promise.all(drains);
    return drains.length;
  }

  private spawn(o: {
    namespace: string;
    name: string;
    files: JobFiles;
    index: number;
    perWorkerBatch: number;
    confirmWaitSec?: number;
  }): Spawned {
    const s = spawnSidecar({ ...o, ...this.o.settings, marker: this.o.marker });
    this.o.pids.add(s.child.pid, `${o.name} sidecar-${o.index}`, 'sidecar');
    void s.exited.then(() => this.o.pids.delete(s.child.pid)).catch(this.o.onError);
    return s;
  }
}

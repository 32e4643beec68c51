/**
 * A training task under the test's control: a log the test writes (one MXNet Speedometer line per
 * batch number, so every record can be traced to its line) and the real sidecar bundle following it,
 * which the test can kill, restart, starve of disk, or whose log it can rotate or truncate.
 */
import { appendFileSync, mkdirSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SIDECAR_BUNDLE } from '../../../sidecar/build.mjs';
import { start, type Child } from './children';

export interface TaskId {
  readonly namespace: string;
  readonly job: string;
  readonly role: 'ps' | 'worker' | 'scheduler';
  readonly index: number;
}

export const taskKey = (t: TaskId): string => `${t.namespace}/${t.job}/${t.role}/${t.index}`;

export class TestTask {
  readonly log: string;
  /** Batch numbers written to the log, in order. */
  readonly written: number[] = [];
  sidecar: Child | null = null;
  private next: number;

  constructor(
    readonly task: TaskId,
    readonly dir: string,
    private readonly brokerUrl: string,
    readonly stateDir = join(dir, 'state'),
    private readonly env: NodeJS.ProcessEnv = {},
    firstBatch = 0,
  ) {
    mkdirSync(dir, { recursive: true });
    mkdirSync(stateDir, { recursive: true });
    this.log = join(dir, 'train.log');
    this.next = firstBatch;
  }

  get key(): string {
    return taskKey(this.task);
  }

  /** Starts the real sidecar bundle (with the production Node flags' effect irrelevant here). */
  start(extraEnv: NodeJS.ProcessEnv = {}, nodeArgs: readonly string[] = []): Child {
    const t = this.task;
    this.sidecar = start(process.execPath, [...nodeArgs, SIDECAR_BUNDLE], {
      env: {
        PATH: process.env['PATH'],
        OPTIMUS_NAMESPACE: t.namespace,
        OPTIMUS_JOB: t.job,
        OPTIMUS_ROLE: t.role,
        OPTIMUS_INDEX: String(t.index),
        OPTIMUS_BROKER_URL: this.brokerUrl,
        OPTIMUS_LOG_PATH: this.log,
        OPTIMUS_STATE_DIR: this.stateDir,
        OPTIMUS_BATCH_SIZE: '32',
        OPTIMUS_POLL_MS: '200',
        OPTIMUS_RECONNECT_MIN_MS: '100',
        OPTIMUS_RECONNECT_MAX_MS: '1000',
        OPTIMUS_RESEND_AFTER_MS: '3000',
        ...this.env,
        ...extraEnv,
      },
    });
    return this.sidecar;
  }

  /** Appends `n` lines with the next batch numbers. */
  write(n: number): void {
    let text = '';
    for (let i = 0; i < n; i++) {
      const b = this.next++;
      this.written.push(b);
      text += `INFO:root:Epoch[0] Batch [${b}]\tSpeed: 100.00 samples/sec\taccuracy=0.500000\n`;
    }
    appendFileSync(this.log, text);
  }

  /** logrotate's default: the log is renamed and a new one created. */
  rotate(): void {
    renameSync(this.log, `${this.log}.${Date.now()}`);
    writeFileSync(this.log, '');
  }

  /** logrotate's `copytruncate`: the file is cut to zero in place. */
  truncate(): void {
    truncateSync(this.log, 0);
  }

  /** The training ended: the sidecar delivers the rest and exits 0. */
  async finish(): Promise<number> {
    writeFileSync(`${this.log}.done`, '');
    return (await this.sidecar?.exit) ?? -1;
  }
}

/**
 * What "0 lost, 0 seq reused" means for one task: every line written is stored exactly once, under
 * one seq, and nothing else is stored (a seq given to two lines would leave one of them missing).
 */
export function expectAllStored(
  t: TestTask,
  stored: ReadonlyMap<number, { batch: number | null }> | undefined,
): void {
  const got = [...(stored?.values() ?? [])].map((r) => r.batch);
  const missing = t.written.filter((b) => !got.includes(b));
  expect({ task: t.key, stored: got.length, missing: missing.slice(0, 20) }).toEqual({
    task: t.key,
    stored: t.written.length,
    missing: [],
  });
  expect(new Set(got).size, `${t.key}: a line stored under two seqs`).toBe(got.length);
}

/**
 * `optimus kubernetes run` as its own process against the API double of the test process, so a
 * test can kill it with SIGKILL at an exact moment: from inside the double's store subscription,
 * i.e. after the API server applied a write and before the controller could read the answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import type { K8sObject, StoredEvent } from '../k8s-api-double/store';
import { CONTROLLER_TOKEN } from './backend-fixture';
import type { TestCluster } from './cluster-fixture';

const REPO = new URL('../..', import.meta.url).pathname;

export interface ControllerProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit signal or code once the process is gone. */
  readonly exited: Promise<string>;
  /** The last few KiB of its stderr (its log at `warn`), for failure messages. */
  stderr(): string;
  /** SIGKILL as soon as the API server has applied a write that `when` matches. */
  killWhen(when: (e: StoredEvent) => boolean): Promise<K8sObject>;
  /** SIGKILL now (idempotent); resolves when the process is gone. */
  kill(): Promise<void>;
}

/** Starts the controller as `controller-0` with rounds only on events (an hour's period). */
export function spawnController(cluster: TestCluster, brokerUrl: string): ControllerProcess {
  const dir = mkdtempSync(join(tmpdir(), 'optimus-k8s-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeConfigFor(cluster.double.url, CONTROLLER_TOKEN).exportConfig());
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'controller/src/cli/main.ts', 'kubernetes', 'run'],
    {
      cwd: REPO,
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        OPTIMUS_BROKER_URL: brokerUrl,
        OPTIMUS_HTTP_PORT: '0',
        // These tests are about scheduling, not the API's token (test/k8s/api-token.test.ts is).
        OPTIMUS_API_INSECURE_NO_TOKEN: 'true',
        POD_NAME: 'controller-0',
        POD_NAMESPACE: 'optimus-system',
        OPTIMUS_SCHEDULING_INTERVAL_SEC: '3600',
        // Two samples: the scenarios here crash and resize inside a pre-run.
        OPTIMUS_PRE_RUN_BUDGET: '2',
        OPTIMUS_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      resolve(signal ?? String(code));
    }),
  );
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    child,
    exited,
    stderr: () => err,
    kill,
    killWhen: (when) =>
      new Promise<K8sObject>((resolve) => {
        const off = cluster.double.api.store.subscribe((e) => {
          if (!when(e)) return;
          // Synchronously, inside the API server's handling of the write: the answer is not sent yet.
          child.kill('SIGKILL');
          off();
          resolve(e.object);
        });
      }),
  };
}

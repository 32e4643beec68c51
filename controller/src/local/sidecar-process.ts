/**
 * Starts the real sidecar bundle beside one worker, configured the way the admission webhook
 * configures it in a cluster: command-line identity plus OPTIMUS_* environment variables.
 */
import type { JobFiles } from './job-files';
import { spawnNode, type Spawned } from './processes';

export interface SidecarLaunch {
  readonly script: string;
  readonly brokerUrl: string;
  readonly namespace: string;
  readonly name: string;
  readonly files: JobFiles;
  readonly index: number;
  /** Per-worker mini-batch: turns samples/s into step time. */
  readonly perWorkerBatch: number;
  /** Marks the process as ours (environment), for orphan clean-up after a crash. */
  readonly marker: string;
}

export function spawnSidecar(o: SidecarLaunch): Spawned {
  const { files, index } = o;
  const args = [
    '--log',
    files.log(index),
    '--broker',
    o.brokerUrl,
    '--namespace',
    o.namespace,
    '--job',
    o.name,
    '--role',
    'worker',
    '--index',
    String(index),
  ];
  const env = {
    ...process.env,
    OPTIMUS_BATCH_SIZE: String(o.perWorkerBatch),
    OPTIMUS_STATE_DIR: files.sidecarState,
    OPTIMUS_DONE_FILE: files.doneMarker(index),
    // Local runs are short and time is accelerated: notice the done marker and reconnect quickly.
    OPTIMUS_POLL_MS: '200',
    OPTIMUS_RECONNECT_MAX_MS: '1000',
    // A sidecar that drains a log while no controller listens (after a crash) must not wait long for
    // confirmations: the broker queues its records, its outbox keeps them, and the next sidecar of
    // the task (or the next drain) sends them again until the controller confirms (ADR 0012).
    OPTIMUS_CONFIRM_WAIT_SEC: '2',
    OPTIMUS_LOCAL_MARKER: o.marker,
  };
  return spawnNode({ script: o.script, args, env, stderrFile: files.stderr(`sidecar-${index}`) });
}

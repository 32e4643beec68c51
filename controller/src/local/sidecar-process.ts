/**
 * Starts the real sidecar bundle beside one worker, configured the way the admission webhook
 * configures it in a cluster: command-line identity plus OPTIMUS_* environment variables.
 */
import type { TaskId } from '../../../shared/src/topics';
import type { JobFiles } from './job-files';
import { spawnNode, type Spawned } from './processes';

/**
 * How long a local sidecar whose worker ended waits for the controller's confirmation after the
 * controller's last chance to give it (ADR 0029): long enough for a controller on a loaded machine
 * to come back to a restarted broker, subscribe and confirm. Sidecars of a live run never leave
 * unconfirmed records within it: the controller that started them is the one that confirms.
 */
export const LOCAL_CONFIRM_WAIT_SEC = 30;
/**
 * The drains after a crash of the previous controller run before the controller connects, so
 * nobody can confirm them: they hand their records to the broker (the controller's persistent
 * session keeps them) and leave after this much.
 */
export const DRAIN_CONFIRM_WAIT_SEC = 5;

/** What every sidecar of a local run shares: the bundle, the broker, and how it gets credentials. */
export interface SidecarSettings {
  readonly script: string;
  readonly brokerUrl: string;
  /** Broker credentials of one task as environment variables (per-job identities, ADR 0013). */
  readonly credentials?: (task: TaskId) => Record<string, string>;
}

export interface SidecarLaunch extends SidecarSettings {
  readonly namespace: string;
  readonly name: string;
  readonly files: JobFiles;
  readonly index: number;
  /** Per-worker mini-batch: turns samples/s into step time. */
  readonly perWorkerBatch: number;
  /** Marks the process as ours (environment), for orphan clean-up after a crash. */
  readonly marker: string;
  /** OPTIMUS_CONFIRM_WAIT_SEC (default {@link LOCAL_CONFIRM_WAIT_SEC}). */
  readonly confirmWaitSec?: number;
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
  const task: TaskId = { namespace: o.namespace, job: o.name, role: 'worker', index };
  // The controller's own broker credentials are not the sidecar's business (nothing is shared, ADR 0013).
  const { OPTIMUS_BROKER_USERNAME: _u, OPTIMUS_BROKER_PASSWORD_FILE: _p, ...inherited } = process.env;
  const env = {
    ...inherited,
    ...o.credentials?.(task),
    OPTIMUS_BATCH_SIZE: String(o.perWorkerBatch),
    OPTIMUS_STATE_DIR: files.sidecarState,
    OPTIMUS_DONE_FILE: files.doneMarker(index),
    // Local runs are short and time is accelerated: notice the done marker and reconnect quickly.
    OPTIMUS_POLL_MS: '200',
    OPTIMUS_RECONNECT_MAX_MS: '1000',
    OPTIMUS_CONFIRM_WAIT_SEC: String(o.confirmWaitSec ?? LOCAL_CONFIRM_WAIT_SEC),
    OPTIMUS_LOCAL_MARKER: o.marker,
    // A controller killed with SIGKILL signals nobody: the sidecar watches it (as the trainer does).
    OPTIMUS_PARENT_PID: String(process.pid),
  };
  return spawnNode({ script: o.script, args, env, stderrFile: files.stderr(`sidecar-${index}`) });
}

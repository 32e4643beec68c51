/**
 * Composition root of the local mode: broker, backend (emulated servers and processes),
 * store, controller runtime, MQTT bridge and HTTP API. `startLocal` returns once everything
 * listens; `stop()` shuts down gracefully (jobs checkpoint, sidecars drain) within a bounded
 * time, then kills whatever is left (ADR 0033).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import { pino, type Logger } from 'pino';
import { bindSource } from '../dashboard/bind-source';
import { startSampler } from '../dashboard/sampler';
import { createApp } from '../http/app';
import { listen, type RunningServer } from '../http/serve';
import { scaledClock } from '../runtime/clock';
import { Controller } from '../runtime/controller';
import type { Core } from '../runtime/core';
import { defaultCore } from '../runtime/default-core';
import { jobIdOf, parseJobSpec } from '../runtime/job-spec';
import { createBridge, type MqttBridge } from '../runtime/mqtt-bridge';
import { WatermarkPublisher } from '../runtime/watermarks';
import { DynsecClient } from '../broker-access/dynsec-client';
import { FileCredentials } from '../broker-access/file-credentials';
import { DynsecIdentities } from '../broker-access/identities';
import { JobAccess } from '../broker-access/job-access';
import { withBrokerAccess } from '../broker-access/with-broker-access';
import { CONTROLLER_STATUS_TOPIC, type TaskId } from '../../../shared/src/topics';
import { LocalBackend, type LocalServer } from './backend';
import { dashboardLink, newApiToken, writeApiToken } from './api-token';
import { LocalBrokerCredentials } from './broker-credentials';
import { noticeDisconnects } from './broker-disconnects';
import { ensureBrokerProcess, killRecordedBroker, type BrokerProcess } from './broker-process';
import { DEMO_SERVERS, type WorkloadJob } from './demo-workload';
import { FileStore } from './file-store';
import { killRecorded, PidRegistry } from './processes';
import { lockStateDir, type StateLock } from './state-lock';
import { runSummary, type RunSummary } from './summary';
import { buildTrainer } from './trainer-bundle';

/** How often the controller tells sidecars what it has stored (one watermark per task per interval). */
const WATERMARK_INTERVAL_MS = 1000;

const statusPayload = (id: string): string => JSON.stringify({ v: 1, state: 'online', ts: Date.now(), id });

/** Wall ms between dashboard samples (progress, predictions, utilisation). */
const DASHBOARD_SAMPLE_MS = 1000;

/** How long a stop lets jobs checkpoint and sidecars deliver before it kills what is left. */
export const STOP_DEADLINE_MS = 10_000;
/** After the kills, how long the rest of the stop (saving, closing the store) may still take. */
const AFTER_KILL_MS = 2000;

/** The controller's log (JSON lines) in a state directory, unless told otherwise. */
export const logFileOf = (stateDir: string): string => join(resolve(stateDir), 'controller.log');
const markerOf = (dir: string): string => `optimus-local:${dir}`;

/**
 * SIGKILLs, synchronously, every process of the run in `stateDir` that is still alive (tasks,
 * sidecars and the embedded broker, as the state directory records them): what a controller
 * does when it cannot stop in order — a crash, a stop that ran out of time, any exit. Returns how
 * many it killed.
 */
export function killRunProcesses(stateDir: string): number {
  const dir = resolve(stateDir);
  const marker = markerOf(dir);
  return killRecorded(join(dir, 'processes.json'), marker) + (killRecordedBroker(dir, marker) ? 1 : 0);
}

const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const SIDECAR_BUNDLE = join(repoRoot, 'sidecar', 'dist', 'sidecar.cjs');

/**
 * The sidecar runs as its real bundle. A fresh checkout has none (`sidecar/dist` is not
 * committed), so `npm start` builds it on first use; esbuild takes well under a second.
 */
async function ensureSidecarBundle(log: Logger): Promise<string> {
  if (existsSync(SIDECAR_BUNDLE)) return SIDECAR_BUNDLE;
  const { buildSidecar } = await import('../../../sidecar/build.mjs');
  const bytes = await buildSidecar();
  log.info({ bundle: SIDECAR_BUNDLE, bytes }, 'built the sidecar bundle');
  return SIDECAR_BUNDLE;
}

export interface LocalOptions {
  /** Where state, job files and logs live (default `.optimus/local`). */
  readonly stateDir: string;
  readonly workload: readonly WorkloadJob[];
  readonly servers?: readonly LocalServer[];
  readonly timeScale: number;
  readonly schedulingIntervalSec: number;
  readonly restartCostSec: number;
  /** Sample shapes of each new job's pre-run (default PRE_RUN_DEFAULTS.budget). */
  readonly preRunBudget?: number | undefined;
  readonly policy: string;
  /** External broker; the embedded one when undefined. */
  readonly brokerUrl?: string | undefined;
  /** The controller's credentials on an external broker. */
  readonly brokerUsername?: string | undefined;
  readonly brokerPassword?: string | undefined;
  /** `dynsec`: administer the external Mosquitto's identities, one per task of each job (ADR 0013). */
  readonly brokerIdentities?: 'none' | 'dynsec';
  readonly httpPort: number;
  /** Address the API listens on: loopback unless told otherwise (it can submit and delete jobs). */
  readonly httpHost?: string | undefined;
  /** The API token (OPTIMUS_API_TOKEN_FILE); a new random one per run when absent (ADR 0031). */
  readonly token?: string | undefined;
  /** Extra names the API answers to (OPTIMUS_HTTP_ALLOWED_HOSTS); IP literals and localhost always. */
  readonly allowedHosts?: readonly string[];
  /** Serve /metrics without the token (OPTIMUS_METRICS_OPEN). */
  readonly metricsOpen?: boolean;
  /** The state directory's lock, when the caller took it already (the CLI, before `--fresh`). */
  readonly lock?: StateLock;
  readonly logLevel: string;
  /** Where the log goes: a file (default `<stateDir>/controller.log`) or `-` for stderr. */
  readonly logFile?: string;
  /**
   * Told as soon as the HTTP port is bound (the dashboard answers 503 until the run is ready):
   * the API's URL, the dashboard's link with the token, the token's file.
   */
  readonly onListening?: (at: { url: string; dashboardUrl: string; tokenFile: string }) => void;
  /** Wall ms a stop waits for an orderly shutdown before it kills what is left (default 10 s). */
  readonly stopDeadlineMs?: number;
  readonly sidecarScript?: string;
  readonly core?: Core;
}

/** What a stop stopped, for the run's last line. */
export interface StopReport {
  /** Trainer processes and sidecars running when the stop began. */
  readonly tasks: number;
  readonly sidecars: number;
  /** True when the run's embedded broker was stopped. */
  readonly broker: boolean;
  /** Processes still alive at the deadline, killed then. */
  readonly killed: number;
  readonly deadlineMs: number;
  /** Wall ms the stop took. */
  readonly ms: number;
}

export interface LocalRun {
  readonly controller: Controller;
  readonly backend: LocalBackend;
  readonly http: RunningServer;
  readonly brokerUrl: string;
  /** The bearer token every API route but /healthz and /readyz needs; also in `<state>/api-token`. */
  readonly apiToken: string;
  /** The dashboard's address carrying the token in its fragment. */
  readonly dashboardUrl: string;
  /** Read-only broker credentials for monitoring subscribers (embedded broker only). */
  readonly brokerObserver: { readonly username: string; readonly password: string } | null;
  readonly log: Logger;
  summary(): RunSummary;
  /** Resolves when every job has finished. */
  allDone(): Promise<void>;
  /** Stops in order within the deadline, then kills what is left; idempotent. */
  stop(): Promise<StopReport>;
}

export async function startLocal(o: LocalOptions): Promise<LocalRun> {
  const dir = resolve(o.stateDir);
  mkdirSync(dir, { recursive: true });
  // A file, not the terminal: the live view and the log never interleave (issue 30).
  const file = o.logFile ?? logFileOf(dir);
  const log = pino(
    { level: o.logLevel, base: { component: 'optimus-local' } },
    pino.destination(file === '-' ? 2 : { dest: file, sync: true, mkdir: true }),
  );
  // Whatever started is stopped again, newest first, if a later step fails: a failed start leaves
  // nothing running (no broker, no tasks, no socket).
  const undo: (() => Promise<void>)[] = [];
  // Before anything else: a second run on this directory stops here (ADR 0032).
  const lock = o.lock ?? lockStateDir(dir);
  undo.push(async () => lock.release());
  try {
    return await startParts({ ...o, lock }, dir, log, undo);
  } catch (err) {
    for (const step of undo.reverse()) await step().catch((e: unknown) => log.warn({ err: e }, 'cleanup'));
    throw err;
  }
}

async function startParts(
  o: LocalOptions,
  dir: string,
  log: Logger,
  undo: (() => Promise<void>)[],
): Promise<LocalRun> {
  // The port first: a busy or invalid one fails before anything else starts. Until the runtime is
  // ready, requests get 503.
  let app: Hono | null = null;
  const http = await listen(
    {
      fetch: (req) =>
        app?.fetch(req) ?? Response.json({ error: { status: 503, message: 'starting' } }, { status: 503 }),
    },
    o.httpPort,
    o.httpHost ?? '127.0.0.1',
  );
  undo.push(() => http.close());
  // The token before the first line: the dashboard link it prints carries it (ADR 0031).
  const apiToken = o.token ?? newApiToken();
  const tokenFile = writeApiToken(dir, apiToken);
  o.onListening?.({ url: http.url, dashboardUrl: dashboardLink(http.url, apiToken), tokenFile });
  const marker = markerOf(dir);
  const pids = new PidRegistry(join(dir, 'processes.json'));
  const reaped = await pids.reapOrphans(marker);
  if (reaped > 0) log.warn({ reaped }, 'stopped processes a previous controller left running');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  // The embedded broker authenticates everyone with keys only this directory holds (ADR 0031).
  const embedded = o.brokerUrl ? null : new LocalBrokerCredentials(dir);
  const broker: BrokerProcess | null = !embedded
    ? null
    : await ensureBrokerProcess({
        dir,
        marker,
        credentials: embedded,
        onRestart: ({ restarts, error }) =>
          error === undefined
            ? log.warn({ restarts }, 'the embedded broker died; started it again on the same port')
            : log.error({ err: error }, 'the embedded broker died and could not be started again; retrying'),
      });
  if (broker) undo.push(() => broker.stop());
  if (broker?.reused) log.warn({ url: broker.url }, 'reusing the broker of the previous controller');
  const brokerUrl = o.brokerUrl ?? broker!.url;
  const credentials = o.brokerIdentities === 'dynsec' ? new FileCredentials(join(dir, 'credentials')) : null;
  const backend = new LocalBackend({
    servers: o.servers ?? DEMO_SERVERS,
    root: join(dir, 'jobs'),
    trainerScript: await buildTrainer(join(dir, 'bin')),
    sidecar: {
      script: o.sidecarScript ?? (await ensureSidecarBundle(log)),
      brokerUrl,
      ...(credentials ? { credentials: (task: TaskId) => credentials.sidecarEnv(task) } : {}),
      ...(embedded ? { credentials: (task: TaskId) => embedded.sidecarEnv(task) } : {}),
    },
    timeScale: o.timeScale,
    restartCostSec: o.restartCostSec,
    pids,
    marker,
    onError: (err) => log.warn({ err }, 'task bookkeeping'),
  });
  undo.push(() => backend.close());
  const store = new FileStore(join(dir, 'store'), {
    onIntegrity: (e) => log.warn(e, `store: ${integrityWords[e.kind]}`),
    recovery: `Move it aside to keep it, or start afresh with \`npm run optimus -- local --fresh --state-dir ${dir}\` (which discards this run's state).`,
  });
  undo.push(() => store.close());
  let controller: Controller | null = null;
  let access: JobAccess | null = null;
  // Opened only once the runtime is ready: until then the broker keeps the persistent session's
  // queued records, unacknowledged (ADR 0012).
  const bridge: MqttBridge = createBridge({
    url: brokerUrl,
    // A stable id: the broker keeps this persistent session's QoS 1 messages across a crash.
    clientId: 'optimus-controller-local',
    ...(embedded ? embedded.controller() : { username: o.brokerUsername, password: o.brokerPassword }),
    onMessage: (t, p) => controller?.handleMessage(t, p),
    onError: (err) => log.warn({ err }, 'mqtt connection'),
    birth: () => ({ topic: CONTROLLER_STATUS_TOPIC, payload: statusPayload('local') }),
    onConnect: () => void access?.reconcile(),
  });
  undo.push(() => bridge.close());
  noticeDisconnects(bridge, log);
  if (credentials) {
    if (!o.brokerUsername || !o.brokerPassword)
      throw new Error("broker identities (dynsec) need the controller's broker user name and password");
    access = new JobAccess({
      identities: new DynsecIdentities(new DynsecClient(bridge.client), o.brokerUsername),
      credentials,
      key: `optimus-job-credentials:${o.brokerPassword}`,
      onError: (err, job) => log.warn({ err, job }, 'broker access'),
    });
    const made = access;
    undo.push(async () => made.close());
  }
  const ctl = new Controller({
    core: o.core ?? defaultCore(o.policy),
    backend: access ? withBrokerAccess(backend, access) : backend,
    store,
    publisher: bridge,
    clock: (origin) => scaledClock({ scale: o.timeScale, originMs: origin ?? Date.now() }),
    log,
    id: 'local',
    schedulingIntervalSec: o.schedulingIntervalSec,
    restartCostSec: o.restartCostSec,
    ...(o.preRunBudget !== undefined && { preRun: { budget: o.preRunBudget } }),
  });
  controller = ctl;
  const drained = await backend.drainLeftovers();
  if (drained > 0) log.warn({ drained }, 'delivered what the sidecars of an earlier run still held');
  await ctl.start();
  undo.push(() => ctl.stop());
  const watermarks = new WatermarkPublisher({
    publisher: bridge,
    durable: () => store.durable(),
    intervalMs: WATERMARK_INTERVAL_MS,
    onError: (err) => log.warn({ err }, 'watermarks'),
  });
  ctl.ingest.listen(watermarks);
  undo.push(() => watermarks.stop());
  await bridge.open();
  const arrivals = scheduleWorkload(ctl, o.workload, log);
  undo.push(async () => arrivals.cancel());
  const source = bindSource(ctl, async () => (await backend.observe()).servers);
  const sampler = startSampler({
    source,
    everyMs: DASHBOARD_SAMPLE_MS,
    onError: (err) => log.warn({ err }, 'dashboard sample'),
  });
  undo.push(async () => sampler.stop());
  app = createApp({
    runtime: ctl,
    token: apiToken,
    access: {
      allowedHosts: [`localhost:${http.port}`, ...(o.allowedHosts ?? [])],
      metricsOpen: o.metricsOpen ?? false,
    },
    logError: (err) => log.error({ err }, 'api error'),
    dashboard: { source, history: sampler.history },
  });
  log.info({ api: http.url, broker: brokerUrl, stateDir: dir, tokenFile }, 'local mode ready');

  let stopping: Promise<StopReport> | null = null;
  const parts: RunParts = { ctl, http, backend, watermarks, access, bridge, store, broker, pids, log };
  const stopOrdered = async (): Promise<void> => {
    arrivals.cancel();
    sampler.stop();
    await stopInOrder(parts);
  };
  return {
    controller: ctl,
    backend,
    http,
    brokerUrl,
    apiToken,
    dashboardUrl: dashboardLink(http.url, apiToken),
    brokerObserver: embedded?.observer() ?? null,
    log,
    summary: () => runSummary(ctl, backend),
    // Polling ends with the run too, so a stopped run leaves no timer keeping the process alive.
    allDone: () => waitFor(() => stopping !== null || (ctl.allDone() && arrivals.pending() === 0)),
    stop: () =>
      (stopping ??= withDeadline({
        ordered: stopOrdered,
        parts,
        deadlineMs: o.stopDeadlineMs ?? STOP_DEADLINE_MS,
      }).finally(() => o.lock?.release())),
  };
}

interface RunParts {
  readonly ctl: Controller;
  readonly http: RunningServer;
  readonly backend: LocalBackend;
  readonly watermarks: WatermarkPublisher;
  readonly access: JobAccess | null;
  readonly bridge: MqttBridge;
  readonly store: FileStore;
  readonly broker: BrokerProcess | null;
  readonly pids: PidRegistry;
  readonly log: Logger;
}

/**
 * The orderly stop: no new rounds, jobs checkpoint, sidecars deliver what they hold (the
 * controller keeps storing and confirming meanwhile), then the broker.
 */
async function stopInOrder(p: RunParts): Promise<void> {
  p.log.info('stopping: controller');
  await p.ctl.stop();
  await p.http.close();
  p.log.info('stopping: jobs (checkpoint) and sidecars (drain)');
  await p.backend.close();
  await p.watermarks.stop();
  p.access?.close();
  await p.bridge.close();
  await p.store.close();
  p.log.info('stopping: broker');
  await p.broker?.stop();
  p.log.info('stopped');
}

/** Runs the orderly stop; what is still alive at the deadline is killed (ADR 0033). */
async function withDeadline(o: {
  ordered: () => Promise<void>;
  parts: RunParts;
  deadlineMs: number;
}): Promise<StopReport> {
  const { pids, broker, log } = o.parts;
  const t0 = Date.now();
  const before = pids.alive();
  const ordered = o.ordered().then(
    () => true,
    (err: unknown) => {
      log.error({ err }, 'stopping in order failed; killing what is left');
      return false;
    },
  );
  let killed = 0;
  if (!(await within(ordered, o.deadlineMs))) {
    const k = pids.signalAll('SIGKILL');
    killed = k.task + k.sidecar + (broker?.kill() ? 1 : 0);
    log.warn({ killed, deadlineMs: o.deadlineMs }, 'stopping took too long: killed what was left');
    await within(ordered, AFTER_KILL_MS);
  }
  return {
    tasks: before.task,
    sidecars: before.sidecar,
    broker: broker !== null,
    killed,
    deadlineMs: o.deadlineMs,
    ms: Date.now() - t0,
  };
}

/** True when `p` resolved true within `ms`; false on a timeout or a false result. */
async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Submits each workload job at its arrival time; jobs already in the store are not resubmitted. */
function scheduleWorkload(
  ctl: Controller,
  jobs: readonly WorkloadJob[],
  log: Logger,
): { pending(): number; cancel(): void } {
  const known = new Set(ctl.records().map((r) => jobIdOf(r.spec)));
  const timers = new Set<NodeJS.Timeout>();
  for (const j of jobs) {
    const parsed = parseJobSpec(j.spec);
    if (!parsed.ok) throw new Error(`workload job ${String(j.spec.name)}: ${parsed.error}`);
    if (known.has(jobIdOf(parsed.spec))) continue;
    const delayMs = Math.max(0, ((j.arrival - ctl.clock.now()) * 1000) / ctl.clock.scale);
    const timer = setTimeout(() => {
      timers.delete(timer);
      ctl
        .submit(parsed.spec)
        .catch((err: unknown) => log.error({ err, job: parsed.spec.name }, 'submit failed'));
    }, delayMs);
    timers.add(timer);
  }
  return {
    pending: () => timers.size,
    cancel: () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

const integrityWords = {
  'torn-tail': 'cut the torn last line of the record log (a write cut short; never acknowledged)',
  quarantined: 'moved lines that are not records out of the record log (see the quarantine file)',
  'missing-at-start':
    'the record log holds fewer records than the last saved state counted: acknowledged records are missing',
  truncated:
    'the record log was cut by something else while running: acknowledged records are gone from disk',
  removed: 'the record log was removed by something else while running; restored it',
  replaced:
    'the record log was replaced by something else while running; restored ours and kept the other aside',
} as const;

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 200));
}

/**
 * Composition root of Kubernetes mode (`optimus kubernetes run`): the Kubernetes backend
 * (informers, executor, webhook, leader election), and — once this replica leads — the
 * backend-agnostic runtime with its MQTT bridge and HTTP API. A replica that loses the lease
 * stops (`lost` resolves) and should exit so it restarts as a follower, as client-go's
 * leader election does.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { Hono, type Context } from 'hono';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ControllerConfig } from '../config/env';
import { apiTokenProblem, readSecretFile } from '../config/env';
import { bindSource } from '../dashboard/bind-source';
import { startSampler } from '../dashboard/sampler';
import { createApp } from '../http/app';
import { requireToken } from '../http/auth';
import { checkHostAndOrigin } from '../http/host-check';
import { listen } from '../http/serve';
import type { RunningServer } from '../http/serve';
import { scaledClock } from '../runtime/clock';
import { Controller } from '../runtime/controller';
import { defaultCore } from '../runtime/default-core';
import { createBridge } from '../runtime/mqtt-bridge';
import type { MqttBridge } from '../runtime/mqtt-bridge';
import { WatermarkPublisher } from '../runtime/watermarks';
import { CONTROLLER_STATUS_TOPIC } from '../../../shared/src/topics';
import { withBrokerAccess } from '../broker-access/with-broker-access';
import type { JobAccess } from '../broker-access/job-access';
import { brokerAccess } from './broker/broker-access';
import { checkpointFromMessage } from './rollout/checkpoint-feed';
import { EVENT_REASON, registerEventMetrics } from './status/events';
import { ClusterStore } from './store/cluster-store';
import type { KubernetesBackend } from './index';
import { createKubernetesBackend } from './index';
import { JobApi } from './api/job-api';
import { describeError } from './api/api-reachability';
import { CredentialsDistributor, startCredentialsSync } from './broker/credentials';
import { clearRejection, markRejected, syncJobs } from './job-feed';
import { CONDITION } from './api/conditions';
import { admissionRules, outOfScope } from './admission-rules';
import { namespaceScope } from './observe/namespace-scope';
import { parseResources } from './api/quantity';
import { KubernetesRuntimeBackend } from './runtime-backend';
import { registerWebhookMetrics } from './webhook/metrics';
import { DEFAULT_SIDECAR_RESOURCES } from './webhook/sidecar-config';

const FEED_RETRY_MS = 5000;
/** The cluster store's own flush period: each watermark waits for one flush (cluster-store.ts). */
const DEFAULT_WATERMARK_INTERVAL_MS = 5000;

export interface KubernetesRunOptions {
  readonly cfg: ControllerConfig;
  readonly kubeConfig: KubeConfig;
  readonly watchNamespace?: string;
  /** Flush period and per-job record budget of the cluster store (defaults in `cluster-store.ts`). */
  readonly store?: { readonly flushMs?: number; readonly maxRecordBytes?: number };
}

export interface KubernetesRun {
  readonly backend: KubernetesBackend;
  /** The runtime (for tools and tests). */
  readonly controller: Controller;
  readonly store: ClusterStore;
  /** Where the API and dashboard listen (for tools and tests). */
  readonly httpUrl: string;
  /** Resolves when this replica loses the leadership it held. */
  readonly lost: Promise<void>;
  stop(): Promise<void>;
}

function webhookOptions(cfg: ControllerConfig) {
  if (!cfg.sidecarImage) return {};
  const brokerUrl = cfg.sidecarBrokerUrl;
  if (!brokerUrl)
    throw new Error(
      'OPTIMUS_SIDECAR_BROKER_URL (or OPTIMUS_BROKER_URL) is required with OPTIMUS_SIDECAR_IMAGE',
    );
  return {
    webhook: {
      port: cfg.webhookPort,
      cert: readFileSync(cfg.webhookCertFile),
      key: readFileSync(cfg.webhookKeyFile),
      sidecar: {
        image: cfg.sidecarImage,
        resources: Object.keys(cfg.sidecarResources).length
          ? cfg.sidecarResources
          : DEFAULT_SIDECAR_RESOURCES,
        brokerUrl,
        ...(cfg.sidecarCredentialsSecret ? { credentialsSecret: cfg.sidecarCredentialsSecret } : {}),
        ...(cfg.brokerIdentities === 'dynsec' ? { perJobCredentials: true } : {}),
        native: 'auto' as const,
      },
    },
  };
}

export async function runKubernetes(o: KubernetesRunOptions): Promise<KubernetesRun> {
  const { cfg } = o;
  if (!cfg.brokerUrl) throw new Error('OPTIMUS_BROKER_URL is required in Kubernetes mode');
  const tokenProblem = apiTokenProblem(cfg);
  if (tokenProblem) throw new Error(tokenProblem);
  const api = apiSettings(cfg);
  const watched = o.watchNamespace ? [o.watchNamespace] : cfg.watchNamespaces;
  const log = pino({ level: cfg.logLevel, base: { component: 'optimus-controller' } }, pino.destination(2));
  const identity = cfg.podName ?? hostname();
  const backend = createKubernetesBackend({
    config: o.kubeConfig,
    namespace: cfg.podNamespace ?? 'default',
    identity,
    ...(watched.length === 1 && !cfg.namespaceSelector ? { watchNamespace: watched[0] } : {}),
    ...(cfg.namespaceSelector ? { namespaceSelector: cfg.namespaceSelector } : {}),
    leaderElection: { enabled: cfg.leaderElection, leaseName: cfg.leaseName },
    ...webhookOptions(cfg),
    // One line per distinct problem and minute: an unreachable API must not print a stack every 2 s.
    onError: throttled((err) => log.warn({ error: describeError(err) }, 'kubernetes backend'), 60_000),
  });
  // With several watched namespaces the job informer is cluster-wide (read-only); run only theirs.
  const scope = namespaceScope({
    named: watched,
    selector: cfg.namespaceSelector,
    selected: () => backend.selectedNamespaces(),
  });
  const jobsInScope = () => backend.jobs.list().filter((e) => scope.includes(e.job.metadata.namespace));
  await backend.start();
  // A follower still serves the webhook and answers its probes (see followerProbes).
  // A follower answers admission reviews too: its counts are scraped from its own /metrics.
  const followerMetrics = new Registry();
  registerWebhookMetrics(followerMetrics, () => backend.webhookStats());
  const standby = await followerProbes(api, followerMetrics);
  log.info({ identity, webhookPort: backend.webhookPort() }, 'waiting for leadership');
  await new Promise<void>((resolve) => {
    if (backend.leader.isLeader()) return resolve();
    const off = backend.leader.onChange((l) => l && (off(), resolve()));
  });
  await standby.close();
  log.info({ identity }, 'leading');

  const rt = new KubernetesRuntimeBackend(backend, {
    onError: (err) => log.warn({ err }, 'job status report'),
  });
  // In the cluster, not on this pod's disk: the next leader may be the other replica.
  const store = new ClusterStore({
    clients: backend.clients,
    jobs: () => jobsInScope().map((e) => ({ id: e.id, job: e.job })),
    isLeader: () => backend.leader.isLeader(),
    onError: (err) => log.warn({ err }, 'cluster store'),
    ...o.store,
  });
  const inScope = (ns: string) => scope.includes(ns) && ns !== cfg.podNamespace;
  const admission = admissionRules(cfg);
  const credentials =
    cfg.credentialsSource && cfg.sidecarCredentialsSecret
      ? startCredentialsSync({
          distributor: new CredentialsDistributor({
            clients: backend.clients,
            sourceNamespace: cfg.podNamespace ?? 'default',
            sourceName: cfg.credentialsSource,
            targetName: cfg.sidecarCredentialsSecret,
          }),
          namespaces: () =>
            [
              ...jobsInScope().map((e) => e.job.metadata.namespace),
              ...backend.injectedPodNamespaces(),
            ].filter(inScope),
          isLeader: () => backend.leader.isLeader(),
          onError: (err, namespace) =>
            log.warn({ error: describeError(err), namespace }, 'sidecar credentials'),
        })
      : null;
  let controller: Controller | null = null;
  const password = cfg.brokerPasswordFile
    ? readSecretFile(cfg.brokerPasswordFile, 'OPTIMUS_BROKER_PASSWORD_FILE')
    : undefined;
  let access: JobAccess | null = null;
  // One client id for every replica: this leader resumes the persistent session — and the records
  // queued in it — of the one before (issue 13). Opened only once the runtime is ready, so nothing is
  // acknowledged to the broker before it is stored (ADR 0012).
  const bridge: MqttBridge = createBridge({
    url: cfg.brokerUrl,
    clientId: cfg.brokerClientId,
    username: cfg.brokerUsername,
    password,
    ca: cfg.brokerCaFile ? readFileSync(cfg.brokerCaFile, 'utf8') : undefined,
    onMessage: (topic, payload) => {
      const cp = checkpointFromMessage(topic, payload);
      if (cp) backend.checkpoints.record(cp.jobId, cp.atMs);
      controller?.handleMessage(topic, payload);
    },
    onError: (err) => log.warn({ err }, 'mqtt connection'),
    birth: () => ({
      topic: CONTROLLER_STATUS_TOPIC,
      payload: JSON.stringify({ v: 1, state: 'online', ts: Date.now(), id: identity }),
    }),
    onConnect: () => void access?.reconcile(),
  });
  access = brokerAccess({ cfg, backend, client: bridge.client, password, log });
  const ctl = new Controller({
    core: defaultCore(cfg.policy),
    // A job created again under an old name gets new credentials: its password is salted by its uid.
    backend: access ? withBrokerAccess(rt, access, (spec) => jobUid(backend, spec)) : rt,
    store,
    publisher: bridge,
    clock: (origin) => scaledClock({ scale: 1, originMs: origin ?? Date.now() }),
    log,
    id: identity,
    schedulingIntervalSec: cfg.schedulingIntervalSec,
    restartCostSec: cfg.restartCostSec,
    preRun: { budget: cfg.preRunBudget },
  });
  controller = ctl;
  registerEventMetrics(ctl.metrics.registry, backend.events);
  registerWebhookMetrics(ctl.metrics.registry, () => backend.webhookStats());
  // Resumes from what the cluster shows: the first round observes pods and statuses.
  await ctl.start();
  // A watermark tells the sidecars what they may forget: only after the ConfigMaps hold it.
  const watermarks = new WatermarkPublisher({
    publisher: bridge,
    durable: () => store.durable(),
    intervalMs: o.store?.flushMs ?? DEFAULT_WATERMARK_INTERVAL_MS,
    onError: (err) => log.warn({ err }, 'watermarks'),
  });
  ctl.ingest.listen(watermarks);
  // Injected sidecars request resources in every PS/worker pod: the policy must count them.
  const podOverhead = cfg.sidecarImage ? sidecarRequests(cfg.sidecarResources) : {};
  // Every OptimusJob known before the queue is taken over: a record queued for a job the store did
  // not hold yet (a leader that died before its first flush) would otherwise arrive for an unknown job.
  await syncJobs(ctl, jobsInScope(), podOverhead, admission).catch((err: unknown) =>
    log.warn({ err }, 'job sync'),
  );
  await bridge.open();
  if (access && cfg.brokerProbeJob) {
    const [namespace = '', job = ''] = cfg.brokerProbeJob.split('/');
    await access.grant({ namespace, job, maxPs: 0, maxWorkers: 1 }, 5000);
  }
  const jobApi = new JobApi(backend.clients);
  let retry: NodeJS.Timeout | undefined;
  const feed = debounce(
    async () => {
      // The sidecars of a job's pods mount the credentials from the job's namespace: copy them first.
      await credentials?.sync();
      const r = await syncJobs(ctl, jobsInScope(), podOverhead, admission);
      const byId = new Map(backend.jobs.list().map((e) => [e.id, e.job]));
      const elsewhere = outOfScope(backend.jobs.list(), scope, cfg.podNamespace);
      for (const rej of [...r.rejected, ...elsewhere]) {
        await markRejected(jobApi, rej, new Date().toISOString());
        // Re-sent every sync; the recorder sends an identical event once per de-dup window.
        const job = byId.get(rej.id);
        if (job)
          backend.events.emit(job, {
            type: 'Warning',
            reason: EVENT_REASON.Rejected,
            action: 'Admit',
            note: `${rej.reason}: ${rej.error}`,
          });
      }
      for (const id of r.submitted)
        if (
          byId.get(id)?.status?.conditions?.some((c) => c.type === CONDITION.Invalid && c.status === 'True')
        )
          await clearRejection(jobApi, id, new Date().toISOString());
      if (r.submitted.length || r.removed.length) log.info(r, 'jobs synced from OptimusJobs');
      if (r.failed.length === 0) return;
      // Informer events may not come again soon: retry the jobs that failed on our own.
      log.warn({ failed: r.failed }, 'job sync failed; retrying');
      clearTimeout(retry);
      retry = setTimeout(feed, FEED_RETRY_MS).unref();
    },
    200,
    (err) => log.warn({ err }, 'job sync'),
  );
  const offJobs = backend.jobs.onChange(feed);
  const offNamespaces = backend.onNamespaceChange(feed);
  feed();
  const source = bindSource(ctl, async () => (await rt.observe()).servers);
  const sampler = startSampler({ source, everyMs: 5000, onError: (err) => log.warn({ err }, 'dashboard') });
  const http: RunningServer = await listen(
    createApp({
      runtime: ctl,
      token: api.token,
      access: api.access,
      allowSubmit: false,
      dashboard: { source, history: sampler.history },
      logError: (err) => log.error({ err }, 'api error'),
    }),
    cfg.httpPort,
    api.host,
  );
  log.info({ api: http.url }, 'kubernetes mode ready');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      offJobs();
      offNamespaces();
      sampler.stop();
      clearTimeout(retry);
      credentials?.stop();
      await ctl.stop();
      await http.close();
      await rt.close();
      await watermarks.stop();
      access?.close();
      await bridge.close();
      await store.close();
      await backend.stop();
    })());
  const lost = new Promise<void>((resolve) => backend.leader.onChange((l) => !l && resolve()));
  return { backend, controller: ctl, store, httpUrl: http.url, lost, stop };
}

/** The token, Host/Origin rules and listen address of both the leader's API and a follower's probes. */
function apiSettings(cfg: ControllerConfig) {
  return {
    token: cfg.apiTokenFile ? readSecretFile(cfg.apiTokenFile, 'OPTIMUS_API_TOKEN_FILE') : undefined,
    // Reached by pod IP (probes, Prometheus), Service names and `kubectl port-forward` (localhost).
    access: {
      allowedHosts: ['localhost', '.svc', '.svc.cluster.local', ...cfg.httpAllowedHosts],
      metricsOpen: cfg.metricsOpen,
    },
    port: cfg.httpPort,
    host: cfg.httpHost ?? '0.0.0.0',
  };
}

/**
 * Probes and API of a replica that waits for the lease. `/healthz` and `/readyz` answer 200:
 * a follower is healthy and serves the webhook, and a Deployment whose new pods never became
 * ready (they start as followers) could never roll out. `/metrics` carries the webhook's counts
 * (a follower serves admission reviews too), behind the same token as the leader's. Everything
 * else answers 503 with `Retry-After`, so an API client that reached the follower through the
 * Service retries.
 */
async function followerProbes(
  api: ReturnType<typeof apiSettings>,
  metrics: Registry,
): Promise<{ close(): Promise<void> }> {
  const app = new Hono();
  app.use(checkHostAndOrigin(api.access.allowedHosts));
  const open = new Set(['/healthz', '/readyz', ...(api.access.metricsOpen ? ['/metrics'] : [])]);
  app.use(requireToken(api.token, (path) => open.has(path)));
  const probe = (c: Context) => c.json({ status: 'ok', role: 'follower' });
  app.get('/healthz', probe);
  app.get('/readyz', probe);
  app.get('/metrics', async (c) =>
    c.text(await metrics.metrics(), 200, { 'content-type': metrics.contentType }),
  );
  app.all('*', (c) =>
    c.json({ error: 'this replica is not the leader; retry' }, 503, { 'retry-after': '5' }),
  );
  return listen(app, api.port, api.host);
}

/** Calls `fn` for an error whose description was not seen in the last `ms`. */
function throttled(fn: (err: unknown) => void, ms: number): (err: unknown) => void {
  const seen = new Map<string, number>();
  return (err) => {
    const key = describeError(err);
    const now = Date.now();
    if ((seen.get(key) ?? -Infinity) > now - ms) return;
    seen.set(key, now);
    if (seen.size > 100) seen.delete(seen.keys().next().value as string);
    fn(err);
  };
}

/** Runs `fn` at most once per `ms`, never concurrently; errors go to `onError`. */
function debounce(fn: () => Promise<void>, ms: number, onError: (err: unknown) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  return () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(fn).catch(onError);
    }, ms);
  };
}

/** The requests of one injected sidecar, in base units (the configured ones, or the defaults). */
function sidecarRequests(configured: ControllerConfig['sidecarResources']): Record<string, number> {
  const requests = Object.keys(configured).length ? configured.requests : DEFAULT_SIDECAR_RESOURCES.requests;
  return parseResources(requests);
}

/** The OptimusJob's uid (what tells this creation of the job from an earlier one of the same name). */
function jobUid(backend: KubernetesBackend, spec: { namespace: string; name: string }): string | undefined {
  const id = `${spec.namespace}/${spec.name}`;
  return backend.jobs.list().find((e) => e.id === id)?.job.metadata.uid;
}

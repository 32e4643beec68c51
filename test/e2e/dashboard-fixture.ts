/**
 * A dashboard served from job views built by hand, each in a state the issue-30 review caught the
 * dashboard getting wrong: a finished job whose end the runtime tells twice and whose speed model is
 * not fitted (2 of 3 shapes) while the chart draws its prior, a no-op resize (same shape, other
 * servers), a job waiting because the cluster's CPU is full (100 %), a job mid-rollout. The views
 * are checked against the API's own schema, the rest of the stack (routes, sampler, history, the
 * browser bundle) is the shipped one, on a real socket.
 */
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { GiB } from '../../shared/src/units';
import { startSampler, type Sampler } from '../../controller/src/dashboard/sampler';
import type { DashboardSource } from '../../controller/src/dashboard/source';
import { createApp } from '../../controller/src/http/app';
import { listen, type RunningServer } from '../../controller/src/http/serve';
import { jobViewSchema, type JobView } from '../../controller/src/runtime/api-schemas';
import { scaledClock } from '../../controller/src/runtime/clock';
import { EventHub } from '../../controller/src/runtime/events';
import type { ObservedRecord } from '../../controller/src/runtime/job-entry';
import { newJobRecord } from '../../controller/src/runtime/job-record';
import { jobSpecSchema } from '../../controller/src/runtime/job-spec';
import type { TaskPlacement } from '../../controller/src/scheduling/types';

const SCALE = 5;
const WAIT_REASON = 'minimum shape 1 PS + 1 worker does not fit the free resources';
/** Job seconds elapsed when the fixture starts. */
const ELAPSED = 900;

export interface Fixture {
  readonly url: string;
  /** The API token (every route but the page's shell needs it, ADR 0031); the page reads it from `#token=`. */
  readonly token: string;
  readonly events: EventHub;
  /** The jobs as the API shows them. */
  readonly views: readonly JobView[];
  stop(): Promise<void>;
}

const demand = { ps: { cpu: 2, memory: 2 * GiB }, worker: { cpu: 2, memory: 4 * GiB } };
const spec = (name: string) =>
  jobSpecSchema.parse({
    name,
    batchSize: 256,
    stepsPerEpoch: 100,
    psDemand: demand.ps,
    workerDemand: demand.worker,
    maxPs: 4,
    maxWorkers: 8,
  });

const placement = (ps: number, workers: number, servers: readonly string[]): TaskPlacement[] => [
  ...Array.from({ length: ps }, (_, i) => ({
    role: 'ps' as const,
    index: i,
    server: servers[i % servers.length]!,
  })),
  ...Array.from({ length: workers }, (_, i) => ({
    role: 'worker' as const,
    index: i,
    server: servers[(i + ps) % servers.length]!,
  })),
];

const PLAN: JobView['plan'] = {
  v: 1,
  ts: 0,
  state: 'running',
  ps: 0,
  workers: 0,
  placement: [],
  reason: null,
  predictedRemainingSec: { value: 271, lower: 200, upper: 400 },
  predictedCompletionTs: null,
  stepsPerSec: 2,
  remainingSteps: 600,
};

/** A job view as the API serves it, validated by the API's schema. */
function view(name: string, o: Partial<JobView>): JobView {
  const base = {
    id: `default/${name}`,
    namespace: 'default',
    name,
    mode: 'sync',
    demand,
    limits: { minPs: 1, maxPs: 4, minWorkers: 1, maxWorkers: 8 },
    phase: 'running',
    state: 'running',
    reason: null,
    shape: null,
    placement: [],
    restarts: 0,
    shapes: [],
    submittedAt: 0,
    finishedAt: null,
    jct: null,
    end: null,
    degraded: null,
    sidecars: {},
    observations: { records: 100, lossPoints: 60, stepsDone: 600, speedShapes: [] },
    models: {
      convergence: {
        status: 'ok',
        predictedTotalSteps: 1200,
        lower: 1100,
        upper: 1300,
        beta: [0.004, 0.5, 0.1],
        fitStartStep: 0,
      },
      speedFitted: true,
      remaining: { steps: 600, lower: 500, upper: 700 },
    },
    plan: PLAN,
    target: null,
    restartCost: { priorSec: 30, medianSec: null, usedSec: 30, samples: 0, last: null },
  };
  return jobViewSchema.parse({ ...base, ...o });
}

export async function startFixture(): Promise<Fixture> {
  const originMs = Date.now() - (ELAPSED * 1000) / SCALE;
  const clock = scaledClock({ scale: SCALE, originMs });
  const wallAt = (jobSec: number) => Math.round(originMs + (jobSec * 1000) / SCALE);
  const servers = ['server-1', 'server-2', 'server-3'].map((name) => ({
    name,
    capacity: { cpu: 8, memory: 32 * GiB },
    reserved: {},
  }));
  const finishedEnd = {
    outcome: 'succeeded',
    reason: 'WorkersSucceeded',
    message: 'worker 0 finished training',
  };
  const records: ObservedRecord[] = [
    {
      ...newJobRecord(spec('finished'), 0, 'f'),
      phase: 'done',
      finishedAt: 514,
      end: finishedEnd as ObservedRecord['end'],
      restarts: 1,
      spans: [
        { shape: { ps: 1, workers: 1 }, since: wallAt(20), until: wallAt(140), fitted: false },
        { shape: { ps: 4, workers: 2 }, since: wallAt(150), until: wallAt(514), fitted: false },
      ],
      preRun: { shapes: [{ ps: 1, workers: 1 }], done: 1 },
      current: null,
      inFlight: false,
    },
    {
      ...newJobRecord(spec('mover'), 10, 'm'),
      phase: 'running',
      restarts: 2,
      spans: [{ shape: { ps: 4, workers: 8 }, since: wallAt(160), until: null, fitted: true }],
      inFlight: false,
      current: {
        shape: { ps: 4, workers: 8 },
        placement: placement(4, 8, ['server-1', 'server-2', 'server-3']),
      },
    },
    {
      ...newJobRecord(spec('starved'), 300, 's'),
      phase: 'waiting',
      reason: WAIT_REASON,
      current: null,
      inFlight: false,
    },
    {
      ...newJobRecord(spec('grower'), 100, 'g'),
      phase: 'running',
      restarts: 3,
      spans: [{ shape: { ps: 1, workers: 1 }, since: wallAt(200), until: wallAt(880), fitted: true }],
      current: null,
      inFlight: false,
    },
  ];
  const views = [
    view('finished', {
      phase: 'done',
      state: 'done',
      finishedAt: 514,
      jct: 514,
      restarts: 1,
      end: finishedEnd as JobView['end'],
      observations: {
        records: 200,
        lossPoints: 60,
        stepsDone: 1000,
        speedShapes: [
          { ps: 1, workers: 1, stepsPerSec: 1.6 },
          { ps: 4, workers: 2, stepsPerSec: 2.7 },
        ],
      },
      models: {
        convergence: {
          status: 'ok',
          predictedTotalSteps: 1200,
          lower: 1100,
          upper: 1300,
          beta: [0.004, 0.5, 0.1],
          fitStartStep: 0,
        },
        speedFitted: false,
        remaining: { steps: 0, lower: 0, upper: 0 },
      },
      plan: {
        v: 1,
        ts: 0,
        state: 'done',
        ps: 0,
        workers: 0,
        placement: [],
        reason: null,
        predictedRemainingSec: { value: 0, lower: 0, upper: 0 },
        predictedCompletionTs: { value: wallAt(514), lower: wallAt(514), upper: wallAt(514) },
        stepsPerSec: null,
        remainingSteps: 0,
      },
    }),
    view('mover', {
      shape: { ps: 4, workers: 8 },
      placement: records[1]!.current!.placement.map((p) => ({ ...p })),
      restarts: 2,
      submittedAt: 10,
      plan: {
        ...PLAN,
        predictedCompletionTs: {
          value: wallAt(ELAPSED + 271),
          lower: wallAt(ELAPSED + 200),
          upper: wallAt(ELAPSED + 400),
        },
      },
    }),
    view('starved', {
      phase: 'waiting',
      state: 'waiting',
      reason: WAIT_REASON,
      submittedAt: 300,
      plan: { ...PLAN, state: 'waiting', predictedRemainingSec: null },
      models: null,
      observations: { records: 0, lossPoints: 0, stepsDone: 0, speedShapes: [] },
    }),
    view('grower', {
      state: 'resizing',
      submittedAt: 100,
      restarts: 3,
      plan: { ...PLAN, state: 'resizing', predictedRemainingSec: null },
    }),
  ];
  const events = new EventHub();
  const loss = Array.from({ length: 60 }, (_, i) => ({
    step: i * 10,
    loss: 1 / (0.004 * i * 10 + 0.5) + 0.1,
  }));
  const source: DashboardSource = {
    clock,
    events,
    list: () => views,
    records: () => records,
    whatIf: (id, ps, workers) => ({
      id,
      shape: { ps, workers },
      withinLimits: true,
      predictedRemainingSec: {
        value: 600 / (ps + workers),
        lower: 500 / (ps + workers),
        upper: 800 / (ps + workers),
      },
      stepsPerSec: { stepsPerSec: 1 + Math.log(ps + workers), lower: 0.8, upper: 3 },
      remainingSteps: { steps: 600, lower: 500, upper: 700 },
      fitted: id !== 'default/finished',
    }),
    convergenceData: () => ({
      lossPoints: loss,
      estimate: {
        status: 'ok',
        predictedTotalSteps: 1200,
        lower: 1100,
        upper: 1300,
        beta: [0.004, 0.5, 0.1],
        remainingSteps: 600,
        converged: false,
      },
    }),
    servers: async () => servers,
  };
  const sampler: Sampler = startSampler({ source, everyMs: 60_000 });
  await sampler.sample();
  // The decisions the review saw: a start, a resize at the same shape, and the end told twice.
  events.emit({
    type: 'decision',
    round: 2,
    ts: wallAt(150),
    actions: [
      {
        kind: 'start',
        jobId: 'default/mover',
        shape: { ps: 4, workers: 8 },
        placement: placement(4, 8, ['server-1']),
      },
    ],
  });
  events.emit({
    type: 'decision',
    round: 8,
    ts: wallAt(420),
    actions: [
      {
        kind: 'resize',
        jobId: 'default/mover',
        from: { ps: 4, workers: 8 },
        shape: { ps: 4, workers: 8 },
        placement: records[1]!.current!.placement,
      },
    ],
  });
  events.emit({ type: 'job', id: 'default/finished', phase: 'done', ts: wallAt(514) });
  events.emit({ type: 'job', id: 'default/finished', phase: 'done', ts: wallAt(515) });
  await sampler.sample();
  const runtime = {
    ready: true,
    metrics: { registry: new Registry() },
    events,
    list: () => views,
    get: (id: string) => views.find((v) => v.id === id),
    submit: async () => ({}),
    remove: async () => {},
    whatIf: (id: string, ps: number, workers: number) => source.whatIf(id, ps, workers),
  };
  const token = randomBytes(16).toString('hex');
  const app = createApp({ runtime, token, dashboard: { source, history: sampler.history } });
  const http: RunningServer = await listen(app, 0);
  return {
    url: http.url,
    token,
    events,
    views,
    stop: async () => {
      sampler.stop();
      await http.close();
    },
  };
}

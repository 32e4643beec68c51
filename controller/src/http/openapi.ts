/**
 * The OpenAPI 3.1 document of the HTTP API (`GET /api/v1/openapi.json`), generated from the same
 * zod schemas that validate requests (`job-spec.ts`) and describe answers (`runtime/api-schemas.ts`), with
 * @asteasolutions/zod-to-openapi: the document cannot drift from what is checked and served.
 * Complete for client generators: an `operationId` on every operation, every status a route can
 * answer, the bearer scheme on every route but liveness and readiness, the servers; linted by
 * Redocly's recommended rules in the tests (`redocly.yaml`), and kept in `docs/api/openapi.json`.
 */
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jobSpecSchema } from '../runtime/job-spec';
import {
  clusterViewSchema,
  errorSchema,
  eventSchemas,
  jobDetailSchema,
  jobListSchema,
  jobViewSchema,
  overviewSchema,
  whatIfSchema,
} from '../runtime/api-schemas';
import { WWW_AUTHENTICATE } from './auth';

/** The name of the bearer scheme in `components.securitySchemes`. */
export const BEARER = 'bearerAuth';

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

type Responses = RouteConfig['responses'];

function buildRegistry(): OpenAPIRegistry {
  const r = new OpenAPIRegistry();
  r.registerComponent('securitySchemes', BEARER, {
    type: 'http',
    scheme: 'bearer',
    description:
      'A token the operator chose: OPTIMUS_API_TOKEN_FILE names the file holding it (in a cluster the Secret of `config.apiToken.existingSecret`; the local mode writes .optimus/local/api-token). Without one configured, the controller asks for none.',
  });
  const JobSpec = jobSpecSchema.meta({ id: 'JobSpec' });
  const Job = jobViewSchema.meta({ id: 'Job' });
  const JobList = jobListSchema.meta({ id: 'JobList' });
  const WhatIf = whatIfSchema.meta({ id: 'WhatIf' });
  const Overview = overviewSchema.meta({ id: 'Overview' });
  const Cluster = clusterViewSchema.meta({ id: 'Cluster' });
  const JobDetail = jobDetailSchema.meta({ id: 'JobDetail' });
  const ApiError = errorSchema.meta({ id: 'Error' });
  const Status = z.object({ status: z.string().describe('`ok` or `ready`') }).meta({ id: 'Status' });
  const events = Object.entries(eventSchemas).map(([type, s]) => s.meta({ id: `Event_${type}` }));
  const err = (description: string) => json(ApiError, description);
  const jobParams = z.object({
    ns: z.string().describe('namespace (a lowercase RFC 1123 label)'),
    name: z.string().describe('job name (a lowercase RFC 1123 label)'),
  });
  /** What every route protected by the token, and every route at all, may also answer. */
  const common: Responses = {
    401: {
      description: 'no bearer token, or a wrong one (RFC 6750)',
      headers: {
        'WWW-Authenticate': {
          description: `\`${WWW_AUTHENTICATE}\``,
          schema: { type: 'string' },
        },
      },
      content: { 'application/json': { schema: ApiError } },
    },
    500: err('an internal error (logged by the controller; the message says nothing more)'),
  };
  const open = (c: RouteConfig): void => r.registerPath({ ...c, security: [] });
  const secured = (c: RouteConfig): void =>
    r.registerPath({ ...c, responses: { ...c.responses, ...common } });

  open({
    method: 'get',
    path: '/healthz',
    operationId: 'getLiveness',
    tags: ['health'],
    summary: 'Liveness: the process answers',
    responses: { 200: json(Status, 'alive'), 500: common[500]! },
  });
  open({
    method: 'get',
    path: '/readyz',
    operationId: 'getReadiness',
    tags: ['health'],
    summary: 'Readiness: the runtime has loaded its state and schedules',
    responses: { 200: json(Status, 'ready'), 503: err('not ready'), 500: common[500]! },
  });
  secured({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    tags: ['health'],
    summary: 'Prometheus metrics (text exposition format); see docs/metrics.md',
    responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: z.string() } } } },
  });
  secured({
    method: 'get',
    path: '/api/v1/jobs',
    operationId: 'listJobs',
    tags: ['jobs'],
    summary: 'Every job',
    responses: { 200: json(JobList, 'the jobs') },
  });
  secured({
    method: 'post',
    path: '/api/v1/jobs',
    operationId: 'submitJob',
    tags: ['jobs'],
    summary: 'Submit a job (local mode; in Kubernetes create an OptimusJob instead)',
    description:
      'Fields with defaults may be left out. Resource amounts are in base units: `cpu` in cores, `memory` in bytes. A job a task of which is larger than every server can never run and is refused with 422.',
    request: { body: { content: { 'application/json': { schema: JobSpec } }, required: true } },
    responses: {
      201: json(Job, 'submitted'),
      400: err('not JSON, or not a valid job (the message names the first bad field)'),
      405: err('submitting is not offered here (Kubernetes mode)'),
      409: err('a job of that namespace/name exists'),
      413: err('body larger than 64 KiB'),
      415: err('the body is not `Content-Type: application/json`'),
      422: err('the job can never fit: one of its tasks is larger than every server (amounts with units)'),
    },
  });
  secured({
    method: 'get',
    path: '/api/v1/jobs/{ns}/{name}',
    operationId: 'getJob',
    tags: ['jobs'],
    summary: 'One job',
    request: { params: jobParams },
    responses: { 200: json(Job, 'the job'), 404: err('no such job') },
  });
  secured({
    method: 'delete',
    path: '/api/v1/jobs/{ns}/{name}',
    operationId: 'deleteJob',
    tags: ['jobs'],
    summary: 'Stop and forget a job',
    request: { params: jobParams },
    responses: {
      200: json(
        z.object({ deleted: z.string().describe('namespace/name') }).meta({ id: 'Deleted' }),
        'deleted',
      ),
      404: err('no such job'),
      415: err('a body was sent under a type other than `application/json`'),
    },
  });
  secured({
    method: 'get',
    path: '/api/v1/what-if',
    operationId: 'whatIf',
    tags: ['jobs'],
    summary: 'Predicted remaining time of a job at another shape (its models at that shape)',
    description: "A shape outside the job's limits is answered, with `withinLimits: false` and a note.",
    request: {
      query: z.object({
        ns: z.string().describe('namespace'),
        name: z.string().describe('job name'),
        ps: z.number().int().min(1).max(10_000).describe('parameter servers'),
        workers: z.number().int().min(1).max(10_000).describe('workers'),
      }),
    },
    responses: {
      200: json(WhatIf, 'the prediction'),
      400: err('a parameter is missing or not a count'),
      404: err('no such job'),
    },
  });
  secured({
    method: 'get',
    path: '/api/v1/events',
    operationId: 'streamEvents',
    tags: ['jobs'],
    summary: 'Server-sent events: decisions, job phase changes, progress',
    description: `Each SSE message's \`event:\` is one of ${Object.keys(eventSchemas).join(', ')}; its \`data:\` is the JSON of the matching Event_<type> schema. A client that reads too slowly gets a \`dropped\` event with the count of events it missed.`,
    responses: {
      200: {
        description: 'an endless event stream',
        content: { 'text/event-stream': { schema: z.union(events) } },
      },
    },
  });
  secured({
    method: 'get',
    path: '/api/v1/overview',
    operationId: 'getOverview',
    tags: ['dashboard'],
    summary:
      "The dashboard's Jobs table: state, shape, progress, predicted completion, restarts, queue position, waiting reason in words",
    responses: { 200: json(Overview, 'the rows') },
  });
  secured({
    method: 'get',
    path: '/api/v1/cluster',
    operationId: 'getCluster',
    tags: ['dashboard'],
    summary: 'Servers with the tasks placed on each, and utilisation over time per resource',
    responses: { 200: json(Cluster, 'the cluster') },
  });
  secured({
    method: 'get',
    path: '/api/v1/jobs/{ns}/{name}/history',
    operationId: 'getJobHistory',
    tags: ['dashboard'],
    summary:
      'One job for the dashboard: loss and fitted curve, prediction over time, speed model, shapes, decisions',
    request: { params: jobParams },
    responses: { 200: json(JobDetail, 'the job'), 404: err('no such job') },
  });
  secured({
    method: 'get',
    path: '/api/v1/openapi.json',
    operationId: 'getOpenApi',
    tags: ['docs'],
    summary: 'This document',
    responses: {
      200: json(z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' }), 'OpenAPI 3.1'),
    },
  });
  return r;
}

let cached: Record<string, unknown> | null = null;

/** The document (generated once per process). */
export function openApiDocument(): Record<string, unknown> {
  cached ??= new OpenApiGeneratorV31(buildRegistry().definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Optimus controller API',
      version: 'v1',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'Jobs, what-if predictions, live events and metrics of the Optimus scheduler. Errors are JSON `{"error": {"status", "message"}}`. Units: durations of jobs in job seconds (the controller\'s clock; the local mode scales it), timestamps in ms since the Unix epoch, speeds in steps per second, resources in Kubernetes base units (`cpu` cores, `memory` bytes, GPUs devices).',
    },
    // One server for both: `kubectl port-forward` listens on 127.0.0.1 too.
    servers: [
      {
        url: 'http://127.0.0.1:8080',
        description:
          'the local mode (`npm start`), or a cluster through `kubectl -n optimus-system port-forward service/optimus-controller 8080:8080`',
      },
    ],
    security: [{ [BEARER]: [] }],
    tags: [
      { name: 'health', description: 'liveness, readiness, metrics' },
      { name: 'jobs', description: 'jobs, predictions and live events' },
      { name: 'dashboard', description: "the web dashboard's views (also for other tools)" },
      { name: 'docs', description: 'this document' },
    ],
  }) as unknown as Record<string, unknown>;
  return cached;
}

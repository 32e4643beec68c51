/**
 * The OpenAPI 3.1 document of the HTTP API (`GET /api/v1/openapi.json`), generated from the same
 * zod schemas that validate requests (`job-spec.ts`) and describe answers (`runtime/api-schemas.ts`), with
 * @asteasolutions/zod-to-openapi: the document cannot drift from what is checked and served.
 */
import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jobSpecSchema } from '../runtime/job-spec';
import {
  errorSchema,
  eventSchemas,
  jobListSchema,
  jobViewSchema,
  whatIfSchema,
} from '../runtime/api-schemas';

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const anyObject = z.record(z.string(), z.unknown());

function buildRegistry(): OpenAPIRegistry {
  const r = new OpenAPIRegistry();
  const JobSpec = jobSpecSchema.meta({ id: 'JobSpec' });
  const Job = jobViewSchema.meta({ id: 'Job' });
  const JobList = jobListSchema.meta({ id: 'JobList' });
  const WhatIf = whatIfSchema.meta({ id: 'WhatIf' });
  const ApiError = errorSchema.meta({ id: 'Error' });
  const events = Object.entries(eventSchemas).map(([type, s]) => s.meta({ id: `Event_${type}` }));
  const err = (description: string) => json(ApiError, description);
  const jobParams = z.object({ ns: z.string().describe('namespace'), name: z.string().describe('job name') });

  r.registerPath({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    responses: { 200: json(anyObject, 'alive') },
  });
  r.registerPath({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the runtime has loaded its state and schedules',
    responses: { 200: json(anyObject, 'ready'), 503: err('not ready') },
  });
  r.registerPath({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics (text exposition format); see docs/metrics.md',
    responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: z.string() } } } },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/jobs',
    summary: 'Every job',
    responses: { 200: json(JobList, 'the jobs') },
  });
  r.registerPath({
    method: 'post',
    path: '/api/v1/jobs',
    summary: 'Submit a job (local mode; in Kubernetes create an OptimusJob instead)',
    description:
      'Fields with defaults may be left out. A job a task of which is larger than every server can never run and is refused with 422. With OPTIMUS_API_TOKEN_FILE set, needs `Authorization: Bearer <token>`.',
    request: { body: { content: { 'application/json': { schema: JobSpec } }, required: true } },
    responses: {
      201: json(Job, 'submitted'),
      400: err('not JSON, or not a valid job (the message names the first bad field)'),
      401: err('no bearer token'),
      403: err('wrong bearer token'),
      405: err('submitting is not offered here (Kubernetes mode)'),
      409: err('a job of that namespace/name exists'),
      413: err('body larger than 64 KiB'),
      422: err('the job can never fit: one of its tasks is larger than every server'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/jobs/{ns}/{name}',
    summary: 'One job',
    request: { params: jobParams },
    responses: { 200: json(Job, 'the job'), 404: err('no such job') },
  });
  r.registerPath({
    method: 'delete',
    path: '/api/v1/jobs/{ns}/{name}',
    summary: 'Stop and forget a job',
    request: { params: jobParams },
    responses: { 200: json(z.object({ deleted: z.string() }), 'deleted'), 404: err('no such job') },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/what-if',
    summary: 'Predicted remaining time of a job at another shape (its models at that shape)',
    description: "A shape outside the job's limits is answered, with `withinLimits: false` and a note.",
    request: {
      query: z.object({
        ns: z.string(),
        name: z.string(),
        ps: z.number().int().min(1).max(10_000),
        workers: z.number().int().min(1).max(10_000),
      }),
    },
    responses: {
      200: json(WhatIf, 'the prediction'),
      400: err('a parameter is missing or not a count'),
      404: err('no such job'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/events',
    summary: 'Server-sent events: decisions, job phase changes, progress',
    description: `Each SSE message's \`event:\` is one of ${Object.keys(eventSchemas).join(', ')}; its \`data:\` is the JSON of the matching Event_<type> schema. A client that reads too slowly gets a \`dropped\` event with the count of events it missed.`,
    responses: {
      200: {
        description: 'an endless event stream',
        content: { 'text/event-stream': { schema: z.union(events) } },
      },
    },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/overview',
    summary:
      "The dashboard's Jobs table: state, shape, progress, predicted completion, restarts, queue position, waiting reason in words",
    responses: { 200: json(anyObject, 'the rows (controller/src/dashboard/job-rows.ts: Overview)') },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/cluster',
    summary: 'Servers with the tasks placed on each, and utilisation over time per resource',
    responses: {
      200: json(anyObject, 'the cluster (controller/src/dashboard/cluster-view.ts: ClusterView)'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/jobs/{ns}/{name}/history',
    summary:
      'One job for the dashboard: loss and fitted curve, prediction over time, speed model, shapes, decisions',
    request: { params: jobParams },
    responses: {
      200: json(anyObject, 'the job (controller/src/dashboard/job-detail.ts: JobDetail)'),
      404: err('no such job'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/api/v1/openapi.json',
    summary: 'This document',
    responses: { 200: json(anyObject, 'OpenAPI 3.1') },
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
      description:
        'Jobs, what-if predictions, live events and metrics of the Optimus scheduler. Errors are JSON `{"error": {"status", "message"}}`.',
    },
  }) as unknown as Record<string, unknown>;
  return cached;
}

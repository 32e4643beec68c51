/**
 * The JSON Schemas of the wire contracts the sidecar checks, generated from the shared zod schemas.
 * The build bundles and runs this at build time and embeds the result; tests call it directly.
 */
import { z } from 'zod';
import { metricsRecordSchema, taskStatusSchema } from '../../../shared/src/schemas';
import { taskIdSchema } from '../../../shared/src/topics';
import type { JsonSchema } from './json-schema';

export interface WireSchemas {
  metricsRecord: JsonSchema;
  taskStatus: JsonSchema;
  taskId: JsonSchema;
}

/** Derives the JSON Schemas from the zod schemas (the single source of truth). */
export function wireSchemasFromZod(): WireSchemas {
  return {
    metricsRecord: z.toJSONSchema(metricsRecordSchema),
    taskStatus: z.toJSONSchema(taskStatusSchema),
    taskId: z.toJSONSchema(taskIdSchema),
  };
}

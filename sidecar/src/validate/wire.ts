/**
 * Validators for what the sidecar publishes and is configured with. In the bundle the JSON Schemas
 * are embedded at build time (`__OPTIMUS_WIRE_SCHEMAS__`, generated from the shared zod schemas);
 * elsewhere (tests, tsx) they are generated on the fly from the same zod schemas.
 */
import { compileValidator, type Validator } from './json-schema';
import { type WireSchemas, wireSchemasFromZod } from './emit-wire-schemas';

declare const __OPTIMUS_WIRE_SCHEMAS__: WireSchemas | undefined;

const schemas: WireSchemas =
  typeof __OPTIMUS_WIRE_SCHEMAS__ !== 'undefined' ? __OPTIMUS_WIRE_SCHEMAS__ : wireSchemasFromZod();

/** `metricsRecordSchema` as a validator: null when valid, else the reason. */
export const validateMetricsRecord: Validator = compileValidator(schemas.metricsRecord);
/** `taskStatusSchema` as a validator. */
export const validateTaskStatus: Validator = compileValidator(schemas.taskStatus);
/** `taskIdSchema` as a validator. */
export const validateTaskId: Validator = compileValidator(schemas.taskId);

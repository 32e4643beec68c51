/**
 * Validators for what the sidecar publishes and is configured with. In the bundle the JSON Schemas
 * are embedded at build time (`__OPTIMUS_WIRE_SCHEMAS__`, generated from the shared zod schemas);
 * elsewhere (tests, tsx) they are generated on the fly from the same zod schemas.
 */
import { type WireSchemas, wireSchemasFromZod } from './emit-wire-schemas';
import { compileFastCheck } from './fast-check';
import { compileValidator, type JsonSchema, type Validator } from './json-schema';

declare const __OPTIMUS_WIRE_SCHEMAS__: WireSchemas | undefined;

const schemas: WireSchemas =
  typeof __OPTIMUS_WIRE_SCHEMAS__ !== 'undefined' ? __OPTIMUS_WIRE_SCHEMAS__ : wireSchemasFromZod();

/** The generated check on the hot path; the reference validator only to explain a failure. */
function validator(schema: JsonSchema): Validator {
  const explain = compileValidator(schema); // also refuses keywords the subset lacks
  const ok = compileFastCheck(schema);
  return (v) => (ok(v) ? null : explain(v));
}

/** `metricsRecordSchema` as a validator: null when valid, else the reason. */
export const validateMetricsRecord: Validator = validator(schemas.metricsRecord);
/** `taskStatusSchema` as a validator. */
export const validateTaskStatus: Validator = validator(schemas.taskStatus);
/** `taskIdSchema` as a validator. */
export const validateTaskId: Validator = validator(schemas.taskId);

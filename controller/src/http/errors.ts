/** JSON errors for the API: a status code and a message, never a stack trace. */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export interface ApiErrorBody {
  readonly error: { readonly status: number; readonly message: string };
}

/** Throw from a handler to answer with a JSON error. */
export class ApiError extends HTTPException {
  constructor(status: ContentfulStatusCode, message: string) {
    super(status, { message });
  }
}

export function errorResponse(c: Context, status: ContentfulStatusCode, message: string): Response {
  const body: ApiErrorBody = { error: { status, message } };
  return c.json(body, status);
}

/** The app's one `onError`: known errors keep their status; anything else is a bare 500. */
export function onError(err: Error, c: Context, log: (err: Error) => void): Response {
  if (err instanceof HTTPException) return errorResponse(c, err.status, err.message);
  const status = (err as { status?: unknown }).status;
  if (status === 400 || status === 404 || status === 409 || status === 422)
    return errorResponse(c, status, err.message);
  log(err);
  return errorResponse(c, 500, 'internal error');
}

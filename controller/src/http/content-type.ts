/**
 * Mutating calls take JSON only: `415 Unsupported Media Type` for anything else. A browser page on
 * another origin can send `text/plain`, form or `multipart` bodies without a CORS preflight, so a
 * request body the API would accept under such a type could create or delete jobs from a web page.
 */
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors';

/** `application/json`, with optional parameters (`; charset=utf-8`), nothing else. */
export const isJson = (type: string | undefined): boolean =>
  type !== undefined && /^application\/json[ \t]*(;|$)/i.test(type.trim());

/**
 * POST, PUT and PATCH need `Content-Type: application/json`; DELETE and other methods without a body
 * may omit it, but a body sent under another type is refused too.
 */
export function requireJson(): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    const type = c.req.header('content-type');
    const needsBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
    if (needsBody ? !isJson(type) : type !== undefined && type !== '' && !isJson(type)) {
      c.header('Accept', 'application/json');
      return errorResponse(
        c,
        415,
        `request body must be application/json, got ${type ? `"${type}"` : 'none'}`,
      );
    }
    return next();
  };
}

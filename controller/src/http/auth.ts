/** Bearer-token protection of mutating calls (when a token is configured). */
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors';

export function requireToken(token: string | undefined): MiddlewareHandler {
  const expected = token === undefined ? null : Buffer.from(token);
  return async (c, next) => {
    if (expected === null) return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) {
      c.header('WWW-Authenticate', 'Bearer realm="optimus"');
      return errorResponse(c, 401, 'missing bearer token (Authorization: Bearer <token>)');
    }
    const given = Buffer.from(match[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return errorResponse(c, 403, 'invalid bearer token');
    }
    return next();
  };
}

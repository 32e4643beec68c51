/**
 * Bearer-token protection of mutating calls (when a token is configured), as RFC 6750 says: a missing
 * or wrong token gets `401` with `WWW-Authenticate: Bearer … error="invalid_token"`. The comparison is
 * of SHA-256 digests with `timingSafeEqual`: fixed-length inputs, so neither the time nor an early
 * length check tells a caller anything about the token, its prefix or its length.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export const WWW_AUTHENTICATE = 'Bearer realm="optimus", error="invalid_token"';

/** True when `given` is the token; constant time in both inputs. */
export function tokenMatches(given: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(given), expected);
}

export function requireToken(token: string | undefined): MiddlewareHandler {
  const expected = token === undefined ? null : digest(token);
  return async (c, next) => {
    if (expected === null) return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (match && tokenMatches(match[1] ?? '', expected)) return next();
    c.header('WWW-Authenticate', WWW_AUTHENTICATE);
    return errorResponse(
      c,
      401,
      match ? 'invalid bearer token' : 'missing bearer token (Authorization: Bearer <token>)',
    );
  };
}

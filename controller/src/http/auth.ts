/**
 * Bearer-token protection of every route but the public ones (ADR 0031), as RFC 6750 says: a missing
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

/**
 * Requires the token on every request whose path `isPublic` does not name; none configured: open.
 * Reads need it as much as writes: a job list, its events and its metrics say what a cluster runs.
 */
export function requireToken(
  token: string | undefined,
  isPublic: (path: string) => boolean = () => false,
): MiddlewareHandler {
  const expected = token === undefined ? null : digest(token);
  return async (c, next) => {
    if (expected === null || isPublic(c.req.path)) return next();
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

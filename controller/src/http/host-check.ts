/**
 * DNS-rebinding and cross-origin protection (ADR 0031). A page on `http://attacker.example` whose
 * name the attacker re-points at 127.0.0.1 talks to our port with `Host: attacker.example`; a page
 * on another local port sends `Origin: http://127.0.0.1:3000`. Both are refused with 403:
 *
 * - `Host` must be an IP literal (a browser sends one only for a URL that names that address, so it
 *   cannot be rebound) or match an allowed name: `name` (any port), `name:port`, or `.suffix` (the
 *   name and every name under it);
 * - `Origin`, when sent, must be this very host (the dashboard is same-origin; nothing is offered
 *   cross-origin), and `null` is refused.
 */
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors';

export const DEFAULT_ALLOWED_HOSTS = ['localhost'] as const;

interface HostPort {
  readonly name: string;
  readonly port: string | null;
}

/** `name`, `name:port`, `[v6]` or `[v6]:port`, lowercased, without a trailing dot; null if malformed. */
export function parseHost(value: string): HostPort | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return null;
  return { name: (m[1] ?? '').toLowerCase().replace(/\.$/, ''), port: m[2] ?? null };
}

const isIpLiteral = (name: string): boolean =>
  name.startsWith('[') ? isIP(name.slice(1, -1)) === 6 : isIP(name) === 4;

/** Whether a request's Host is one we answer to. */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = parseHost(host);
  if (h === null || h.name === '') return false;
  if (isIpLiteral(h.name)) return true;
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    if (e.startsWith('.')) return h.name === e.slice(1) || h.name.endsWith(e);
    const want = parseHost(e);
    return want !== null && want.name === h.name && (want.port === null || want.port === h.port);
  });
}

export function checkHostAndOrigin(allowed: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    if (!hostAllowed(host, allowed))
      return errorResponse(
        c,
        403,
        `host "${host}" is not one this API answers to (a DNS-rebinding page would send it); ` +
          'add it to OPTIMUS_HTTP_ALLOWED_HOSTS if it is yours',
      );
    const origin = c.req.header('origin');
    if (origin !== undefined && !sameOrigin(origin, host))
      return errorResponse(c, 403, `cross-origin request from ${origin} refused`);
    return next();
  };
}

function sameOrigin(origin: string, host: string): boolean {
  if (origin === 'null') return false;
  try {
    return new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

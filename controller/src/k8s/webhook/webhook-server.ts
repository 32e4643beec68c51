/**
 * The webhook's HTTPS edge (node:https): `POST /mutate` with an AdmissionReview, `GET /healthz`.
 * Bad bodies get a 400 with a message; the process never throws out of a request.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReviewOutcome } from './admission';
import { REVIEW_OUTCOMES, reviewAdmission } from './admission';
import type { SidecarConfig } from './sidecar-config';

export interface WebhookServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  readonly sidecar: SidecarConfig;
  /** Called for every request that could not be reviewed (counted by the caller). */
  readonly onReject?: (reason: string) => void;
}

export interface WebhookServer {
  /** The bound port (useful with `port: 0`). */
  readonly port: number;
  /** Reviews answered, by outcome, and requests refused (not an AdmissionReview). */
  readonly stats: WebhookStats;
  close(): Promise<void>;
}

export type WebhookStats = Record<ReviewOutcome | 'refused', number>;
export const emptyWebhookStats = (): WebhookStats =>
  Object.fromEntries([...REVIEW_OUTCOMES, 'refused'].map((k) => [k, 0])) as WebhookStats;

const MAX_BODY_BYTES = 3 * 1024 * 1024; // the API server caps objects at ~1.5 MiB; reviews hold two

function reply(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; code: number; error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      return { ok: false, code: 413, error: `body larger than ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, code: 400, error: 'body is not valid JSON' };
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: WebhookServerOptions,
  stats: WebhookStats,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/healthz') return reply(res, 200, { ok: true });
  if (path !== '/mutate') return reply(res, 404, { error: `no route ${req.method} ${path}` });
  if (req.method !== 'POST') return reply(res, 405, { error: 'use POST /mutate' });
  const body = await readJson(req);
  if (!body.ok) {
    stats.refused += 1;
    opts.onReject?.(body.error);
    return reply(res, body.code, { error: body.error });
  }
  const result = reviewAdmission(body.value, opts.sidecar);
  if (!result.ok) {
    stats.refused += 1;
    opts.onReject?.(result.error);
    return reply(res, 400, { error: result.error });
  }
  stats[result.outcome] += 1;
  reply(res, 200, result.review);
}

/** Starts the HTTPS server. */
export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const stats = emptyWebhookStats();
  const server = https.createServer({ cert: opts.cert, key: opts.key }, (req, res) => {
    handle(req, res, opts, stats).catch((err: unknown) => {
      opts.onReject?.(String(err));
      if (!res.headersSent) reply(res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

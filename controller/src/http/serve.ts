/** Serves the Hono app on a real socket (@hono/node-server). */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on `port` (0 = any free port) and resolves once listening. */
export async function listen(app: Hono, port: number, hostname = '127.0.0.1'): Promise<RunningServer> {
  let server: ServerType | undefined;
  const info = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve({ fetch: app.fetch, port, hostname }, (i) => resolve(i));
    server.once('error', reject);
  });
  const s = server!;
  return {
    port: info.port,
    url: `http://${hostname}:${info.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // SSE streams stay open: drop them rather than wait for the clients.
        (s as { closeAllConnections?: () => void }).closeAllConnections?.();
        s.close(() => resolve());
      }),
  };
}

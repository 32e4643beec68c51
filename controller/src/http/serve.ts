/** Serves the Hono app on a real socket (@hono/node-server). */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Anything with Hono's `fetch` (a Hono app, or a stand-in that answers until the app exists). */
export interface Fetchable {
  fetch(request: Request, ...rest: never[]): Response | Promise<Response>;
}

/** The socket could not be opened; the message says why in one line (busy port, no permission). */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Listens on `port` (0 = any free port) and resolves once listening. */
export async function listen(app: Fetchable, port: number, hostname = '127.0.0.1'): Promise<RunningServer> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ListenError(`HTTP port must be an integer in [0, 65535], got ${port}`, 'ERR_SOCKET_BAD_PORT');
  let server: ServerType | undefined;
  const info = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve({ fetch: (req: Request) => app.fetch(req), port, hostname }, (i) => resolve(i));
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, hostname, port)));
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

function listenError(err: NodeJS.ErrnoException, hostname: string, port: number): ListenError {
  const where = `${hostname}:${port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ListenError(`cannot listen on ${where}: the port is already in use`, err.code);
    case 'EACCES':
      return new ListenError(
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`,
        err.code,
      );
    case 'EADDRNOTAVAIL':
      return new ListenError(`cannot listen on ${where}: no such local address`, err.code);
    default:
      return new ListenError(`cannot listen on ${where}: ${err.message}`, err.code);
  }
}

/**
 * Brokers for end-to-end tests, behind one interface so every case runs against each:
 * an in-process aedes (MQTT 3.1.1; outages are real broker restarts) and an external Mosquitto
 * (MQTT 5; outages are simulated by a TCP proxy between the sidecar and the broker).
 */
import net from 'node:net';
import { Aedes } from 'aedes';

export interface TestBroker {
  name: string;
  /** What the subscriber connects to. */
  url: string;
  /** What the sidecar connects to. */
  sidecarUrl: string;
  version: 4 | 5;
  /** The sidecar loses the broker (and cannot reconnect until `recover`). */
  outage(): Promise<void>;
  /** The broker is back; `beforeSidecars` runs before sidecars may connect (e.g. resubscribing). */
  recover(beforeSidecars?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

const isSidecar = (clientId: string): boolean => clientId.startsWith('optimus.');

/** In-process aedes on a random port; sidecars are refused while `gateOpen` is false. */
export async function aedesBroker(): Promise<TestBroker> {
  let server: net.Server | null = null;
  let broker: Aedes | null = null;
  let gateOpen = true;
  let port = 0;
  const sockets = new Set<net.Socket>();
  const start = async (): Promise<void> => {
    const b = await Aedes.createBroker({
      // Refused with CONNACK "not authorized" (code 5), as a real broker would answer.
      authenticate: (client, _user, _password, cb) => {
        if (gateOpen || !isSidecar(client.id)) cb(null, true);
        else cb(Object.assign(new Error('broker not ready'), { returnCode: 5 as const }), false);
      },
    });
    const srv = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      b.handle(s);
    });
    await new Promise<void>((resolve) => srv.listen(port, '127.0.0.1', resolve));
    port = (srv.address() as net.AddressInfo).port;
    server = srv;
    broker = b;
  };
  const stop = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    const srv = server;
    const b = broker;
    server = null;
    broker = null;
    if (srv !== null) await new Promise<void>((resolve) => srv.close(() => resolve()));
    if (b !== null) await new Promise<void>((resolve) => b.close(() => resolve()));
  };
  await start();
  const url = `mqtt://127.0.0.1:${port}`;
  return {
    name: 'aedes (MQTT 3.1.1)',
    url,
    sidecarUrl: url,
    version: 4,
    outage: stop,
    recover: async (before) => {
      gateOpen = false;
      await start();
      await before?.();
      gateOpen = true;
    },
    close: stop,
  };
}

/** A TCP proxy that can cut every connection and refuse new ones (a broker outage as seen by one client). */
export async function cuttableProxy(target: {
  host: string;
  port: number;
}): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  let open = true;
  const pairs = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target);
    for (const s of [client, upstream]) {
      pairs.add(s);
      s.on('close', () => {
        pairs.delete(s);
        client.destroy();
        upstream.destroy();
      });
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    cut: () => {
      open = false;
      for (const s of pairs) s.destroy();
    },
    restore: () => {
      open = true;
    },
    close: async () => {
      for (const s of pairs) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An external broker (Mosquitto in CI) reached by the sidecar through a cuttable proxy. */
export async function externalBroker(url: string, version: 4 | 5): Promise<TestBroker> {
  const u = new URL(url);
  const proxy = await cuttableProxy({ host: u.hostname, port: Number(u.port || 1883) });
  return {
    name: `external ${url} (MQTT ${version === 5 ? '5' : '3.1.1'})`,
    url,
    sidecarUrl: proxy.url,
    version,
    outage: async () => proxy.cut(),
    recover: async (before) => {
      await before?.();
      proxy.restore();
    },
    close: () => proxy.close(),
  };
}

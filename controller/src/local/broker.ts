/**
 * The embedded broker of the local mode (aedes, MQTT 3.1.1): QoS 1, retained messages,
 * persistent sessions and Last Wills are all the protocol we need. Any external broker can
 * replace it (`--broker`).
 */
import net from 'node:net';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  readonly url: string;
  readonly port: number;
  /** Connected clients whose id matches the `watch` predicate. */
  watchedClients(): number;
  close(): Promise<void>;
}

/** Starts aedes on 127.0.0.1:`port` (0 = any free port). */
export async function startEmbeddedBroker(
  port = 0,
  watch: (clientId: string) => boolean = () => false,
  onClientError?: (clientId: string, err: Error) => void,
): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker();
  // aedes closes a client's connection on these (protocol errors, queue limits, resets): without a
  // word the client only sees ECONNRESET.
  if (onClientError) broker.on('clientError', (c, err) => onClientError(c.id, err));
  const sockets = new Set<net.Socket>();
  let watched = 0;
  broker.on('client', (c) => (watched += watch(c.id) ? 1 : 0));
  broker.on('clientDisconnect', (c) => (watched -= watch(c.id) ? 1 : 0));
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    broker.handle(s);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const actual = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${actual}`,
    port: actual,
    watchedClients: () => watched,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}

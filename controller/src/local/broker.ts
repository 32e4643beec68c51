/**
 * The embedded broker of the local mode (aedes, MQTT 3.1.1): QoS 1, retained messages,
 * persistent sessions and Last Wills are all the protocol we need. Any external broker can
 * replace it (`--broker`).
 *
 * With `access` (what the local mode always passes) it authenticates every client and enforces the
 * rules of `broker-acl.ts` (ADR 0031) through aedes' `authenticate`, `authorizePublish`,
 * `authorizeSubscribe` and `authorizeForward`: anonymous clients and unknown users are refused, a
 * user connects only under its own client id, the controller's id cannot be taken while the
 * controller is connected, and each task publishes and reads only its own topics. Without `access`
 * it is an open broker, for tests that need any MQTT broker.
 */
import net from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import {
  clientIdAllowed,
  identityOf,
  mayPublish,
  mayReceive,
  maySubscribe,
  RESERVED_PREFIX,
  type BrokerIdentity,
} from './broker-acl';
import { passwordMatches } from './broker-credentials';

export interface EmbeddedBroker {
  readonly url: string;
  readonly port: number;
  /** Connected clients whose id matches the `watch` predicate. */
  watchedClients(): number;
  close(): Promise<void>;
}

/** Why the broker refused something: one line each in the broker's log. */
export interface Refusal {
  readonly what: 'connect' | 'publish' | 'subscribe';
  readonly clientId: string;
  readonly username: string | null;
  readonly topic?: string;
  readonly reason: string;
}

export interface EmbeddedBrokerOptions {
  /** Counts connected clients whose id matches (the broker's idle exit). */
  readonly watch?: (clientId: string) => boolean;
  readonly onClientError?: (clientId: string, err: Error) => void;
  /** Authentication and ACLs; absent: an open broker (tests only). */
  readonly access?: { readonly key: Buffer; readonly onRefused?: (r: Refusal) => void };
}

/** Starts aedes on 127.0.0.1:`port` (0 = any free port). */
export async function startEmbeddedBroker(port = 0, o: EmbeddedBrokerOptions = {}): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker(o.access ? guarded(o.access) : {});
  // aedes closes a client's connection on these (protocol errors, queue limits, resets): without a
  // word the client only sees ECONNRESET.
  const onClientError = o.onClientError;
  if (onClientError) broker.on('clientError', (c, err) => onClientError(c.id, err));
  const sockets = new Set<net.Socket>();
  const watch = o.watch ?? (() => false);
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

/** MQTT 3.1.1 CONNACK codes: 2 identifier rejected, 4 bad user name or password, 5 not authorised. */
const refusal = (returnCode: 2 | 4 | 5, message: string): AuthenticateError =>
  Object.assign(new Error(message), { returnCode });

function guarded(a: NonNullable<EmbeddedBrokerOptions['access']>) {
  const identities = new WeakMap<Client, BrokerIdentity>();
  /** The controller's live connection: its id is not taken over while it lives. */
  const controllers = new Map<string, Client>();
  const refuse = (r: Refusal): void => a.onRefused?.(r);
  return {
    authenticate(
      client: Client,
      username: Readonly<string | undefined>,
      password: Readonly<Buffer | undefined>,
      done: (error: AuthenticateError | null, success: boolean | null) => void,
    ): void {
      const clientId = client.id;
      const no = (code: 2 | 4 | 5, reason: string) => {
        refuse({ what: 'connect', clientId, username: username ?? null, reason });
        done(refusal(code, reason), false);
      };
      if (username === undefined || username === '') return no(5, 'anonymous clients are refused');
      const id = identityOf(username);
      if (id === null) return no(5, `unknown user ${username}`);
      if (!passwordMatches(a.key, username, password)) return no(4, `wrong password for ${username}`);
      if (
        !clientIdAllowed(id, username, clientId) ||
        (clientId.startsWith(RESERVED_PREFIX) && id.kind !== 'controller')
      )
        return no(5, `user ${username} may not connect as client ${clientId}`);
      if (id.kind === 'controller' && controllers.has(clientId))
        return no(2, `client id ${clientId} is in use by the connected controller`);
      identities.set(client, id);
      if (id.kind === 'controller') {
        controllers.set(clientId, client);
        client.conn.once('close', () => controllers.get(clientId) === client && controllers.delete(clientId));
      }
      done(null, true);
    },
    authorizePublish(
      client: Client | null,
      packet: { topic: string },
      done: (error?: Error | null) => void,
    ): void {
      const id = client ? identities.get(client) : undefined;
      if (id !== undefined && mayPublish(id, packet.topic)) return done(null);
      refuse({
        what: 'publish',
        clientId: client?.id ?? '(none)',
        username: null,
        topic: packet.topic,
        reason: 'not allowed',
      });
      done(new Error(`not authorised to publish to ${packet.topic}`));
    },
    authorizeSubscribe(
      client: Client,
      sub: { topic: string; qos: 0 | 1 | 2 },
      done: (error: Error | null, subscription?: typeof sub | null) => void,
    ): void {
      const id = identities.get(client);
      if (id !== undefined && maySubscribe(id, sub.topic)) return done(null, sub);
      refuse({
        what: 'subscribe',
        clientId: client.id,
        username: null,
        topic: sub.topic,
        reason: 'not allowed',
      });
      done(null, null); // SUBACK 0x80 for this filter; the connection stays
    },
    authorizeForward<P extends { topic: string }>(client: Client, packet: P): P | null {
      const id = identities.get(client);
      return id !== undefined && mayReceive(id, packet.topic) ? packet : null;
    },
  };
}

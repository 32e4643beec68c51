/**
 * The controller's MQTT adapter: subscribes to every task's metrics and status, hands each message to
 * the runtime, and publishes plans, watermarks and the controller status (with a Last Will).
 *
 * Nothing is acknowledged to the broker before it is stored (ADR 0012). The bridge is created
 * unconnected and opened only once the runtime is ready: the persistent session's queued messages
 * stay at the broker, unacknowledged, until then (a controller killed while it recovers loses none),
 * and each message is handed to `onMessage` synchronously before mqtt.js sends its PUBACK.
 *
 * The birth message (the controller's `online` status) goes out only once the controller listens:
 * at once on a resumed session, after the SUBACK on a new one (a broker restarted without its state).
 * Sidecars resend everything unconfirmed when they see it (ADR 0012, 0029); sent before the
 * subscription, those resends would reach a broker that has nobody to give them to.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { CONTROLLER_STATUS_TOPIC, METRICS_FILTER, STATUS_FILTER } from '../../../shared/src/topics';
import type { Publisher } from './controller';

const CLOSE_TIMEOUT_MS = 2000;
/** How long `open` keeps retrying a broker that resets or refuses the socket. */
const OPEN_DEADLINE_MS = 30_000;

export interface BridgeOptions {
  readonly url: string;
  /** One id for every replica (CONTROLLER_CLIENT_ID): a new leader resumes the session of the old. */
  readonly clientId: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly ca?: string | undefined;
  /**
   * Stores the message before returning (mqtt.js acknowledges it to the broker right after).
   * Must not throw.
   */
  readonly onMessage: (topic: string, payload: Uint8Array) => void;
  /** Errors after the first CONNACK (connection resets, keep-alive timeouts); mqtt.js reconnects by itself. */
  readonly onError?: (err: Error) => void;
  /**
   * Published, retained, after every connect once the subscriptions are in place: a broker restarted
   * without its state must learn the controller's `online` status again (the Last Will covers
   * `offline`).
   */
  readonly birth?: () => { readonly topic: string; readonly payload: string };
  /** Called after every connect (first and reconnects), e.g. to reconcile broker identities. */
  readonly onConnect?: (client: MqttClient) => void;
  /** How long `open` retries a broker that resets or refuses the socket (default 30 s). */
  readonly openTimeoutMs?: number;
}

export interface MqttBridge extends Publisher {
  readonly client: MqttClient;
  /** Connects (waiting for the first CONNACK) and subscribes; the runtime must be ready. */
  open(): Promise<void>;
  close(): Promise<void>;
}

/** Creates the bridge without connecting; see {@link MqttBridge.open}. */
export function createBridge(o: BridgeOptions): MqttBridge {
  const client = mqtt.connect(o.url, clientOptions(o));
  // Attached before the CONNACK: a resumed session delivers its queued messages right after it.
  client.on('message', (topic, payload) => o.onMessage(topic, payload));
  let opened = false;
  let connects = 0;
  let announced = 0;
  /** The birth of connection `n`, once, and only while that connection is the current one. */
  const announce = (n: number): void => {
    if (n !== connects || announced === n || !client.connected) return;
    announced = n;
    const birth = o.birth?.();
    if (birth) void client.publishAsync(birth.topic, birth.payload, { qos: 1, retain: true }).catch(noop);
  };
  client.on('connect', (ack) => {
    connects += 1;
    const n = connects;
    if (ack.sessionPresent) announce(n);
    // A broker that lost its state (no persistence) lost our subscriptions with the session (the
    // first connect subscribes in `open`, and announces after it).
    else if (n > 1)
      client.subscribe([METRICS_FILTER, STATUS_FILTER], { qos: 1 }, (err) => {
        if (err) o.onError?.(err);
        else announce(n);
      });
    o.onConnect?.(client);
  });
  return {
    client,
    async open() {
      opened = true;
      await new Promise<void>((resolve, reject) => {
        // A refused CONNACK (bad credentials, not authorised) is final; a reset or refused socket
        // (a broker restarting, taking over the session of a killed controller) is retried by
        // mqtt.js until the deadline.
        let lastError: Error | null = null;
        const deadline = setTimeout(
          () => fail(lastError ?? new Error(`no CONNACK from ${o.url}`)),
          o.openTimeoutMs ?? OPEN_DEADLINE_MS,
        );
        const fail = (err: Error) => {
          clearTimeout(deadline);
          client.off('error', onFirstError);
          client.end(true);
          reject(err);
        };
        const onFirstError = (err: Error & { code?: unknown }) => {
          lastError = err;
          if (typeof err.code === 'number') fail(err);
        };
        client.on('error', onFirstError);
        client.once('connect', () => {
          clearTimeout(deadline);
          // Later errors must neither end the client (it reconnects on its own) nor go unheard:
          // an 'error' event without a listener would crash the process.
          client.off('error', onFirstError);
          client.on('error', (err) => o.onError?.(err));
          resolve();
        });
        client.connect();
      });
      await subscribeUntil(client, Date.now() + (o.openTimeoutMs ?? OPEN_DEADLINE_MS));
      announce(connects);
    },
    async publish(topic, payload, { retain }) {
      const sent = client.publishAsync(topic, payload, { qos: 1, retain });
      // Before `open` (the runtime starting up) mqtt.js only queues the message: waiting for its
      // acknowledgement would wait for the connection, which waits for the runtime.
      if (!opened) return void sent.catch(noop);
      await sent;
    },
    async close() {
      // Never connected: there is no stream to end (mqtt.js would throw on it).
      if (!opened) {
        client.removeAllListeners();
        return;
      }
      // With the broker down a graceful end waits for acknowledgements that never come: bounded.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (r) => (timer = setTimeout(() => r('timeout'), CLOSE_TIMEOUT_MS)),
      );
      const r = await Promise.race([client.endAsync().then(() => 'ended' as const), timeout]);
      clearTimeout(timer);
      if (r === 'timeout') await client.endAsync(true).catch(noop);
    },
  };
}

function clientOptions(o: BridgeOptions): IClientOptions {
  const opts: IClientOptions = {
    clientId: o.clientId,
    // A persistent session: QoS 1 metrics sent while we are away are queued by the broker.
    clean: false,
    manualConnect: true,
    reconnectPeriod: 500,
    connectTimeout: 10_000,
    // We subscribe again ourselves after a session was lost, and announce ourselves after its SUBACK;
    // mqtt.js's own resubscription would make ours a no-op whose callback says nothing about it.
    resubscribe: false,
    will: {
      topic: CONTROLLER_STATUS_TOPIC,
      payload: Buffer.from(JSON.stringify({ v: 1, state: 'offline', ts: Date.now(), id: o.clientId })),
      qos: 1,
      retain: true,
    },
  };
  if (o.username !== undefined) opts.username = o.username;
  if (o.password !== undefined) opts.password = o.password;
  if (o.ca !== undefined) opts.ca = o.ca;
  return opts;
}

const noop = (): void => {};

/**
 * Subscribes, again after each reconnect if the connection drops before the SUBACK (mqtt.js then
 * rejects with "Connection closed"). aedes 1.2 can close a resuming session's connection while it
 * replays the backlog ("no such packet": a PUBACK cleared a queued packet that shared a stale
 * message id), and a broker may restart: neither must fail the controller's start. Nothing is lost
 * by the drop (sidecars resend until the watermark covers a record, ADR 0012). Rejects at the deadline.
 */
async function subscribeUntil(client: MqttClient, deadline: number): Promise<void> {
  for (;;) {
    try {
      await client.subscribeAsync([METRICS_FILTER, STATUS_FILTER], { qos: 1 });
      return;
    } catch (err) {
      const left = deadline - Date.now();
      if (left <= 0 || client.disconnecting) throw err;
      if (client.connected) await new Promise((r) => setTimeout(r, Math.min(left, 200)));
      else await reconnected(client, left, err);
    }
  }
}

function reconnected(client: MqttClient, ms: number, cause: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('connect', onConnect);
      reject(cause instanceof Error ? cause : new Error(String(cause)));
    }, ms);
    const onConnect = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once('connect', onConnect);
  });
}

/** {@link createBridge} and {@link MqttBridge.open} in one step, for tools and tests. */
export async function connectBridge(o: BridgeOptions): Promise<MqttBridge> {
  const bridge = createBridge(o);
  await bridge.open();
  return bridge;
}

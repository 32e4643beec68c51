/**
 * The controller's MQTT adapter: subscribes to every task's metrics and status, hands each
 * message to the runtime, and publishes plans and the controller status (with a Last Will).
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { CONTROLLER_STATUS_TOPIC, METRICS_FILTER, STATUS_FILTER } from '../../../shared/src/topics';
import type { Publisher } from './controller';

export interface BridgeOptions {
  readonly url: string;
  readonly clientId: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly ca?: string | undefined;
  readonly onMessage: (topic: string, payload: Uint8Array) => void;
  /** Errors after the first CONNACK (connection resets, keep-alive timeouts); mqtt.js reconnects by itself. */
  readonly onError?: (err: Error) => void;
}

export interface MqttBridge extends Publisher {
  readonly client: MqttClient;
  close(): Promise<void>;
}

/** Connects (waiting for the first CONNACK) and subscribes with QoS 1. */
export async function connectBridge(o: BridgeOptions): Promise<MqttBridge> {
  const opts: IClientOptions = {
    clientId: o.clientId,
    // A persistent session: QoS 1 metrics sent while we reconnect are queued by the broker.
    clean: false,
    reconnectPeriod: 500,
    connectTimeout: 10_000,
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
  const client = mqtt.connect(o.url, opts);
  // Attached before the CONNACK: a resumed session delivers its queued messages right after it,
  // and mqtt.js acknowledges (and drops) messages nobody listens to.
  client.on('message', (topic, payload) => o.onMessage(topic, payload));
  await new Promise<void>((resolve, reject) => {
    const failFirst = (err: Error) => {
      client.end(true);
      reject(err);
    };
    client.once('error', failFirst);
    client.once('connect', () => {
      // Later errors must neither end the client (it reconnects on its own) nor go unheard:
      // an 'error' event without a listener would crash the process.
      client.off('error', failFirst);
      client.on('error', (err) => o.onError?.(err));
      resolve();
    });
  });
  await client.subscribeAsync([METRICS_FILTER, STATUS_FILTER], { qos: 1 });
  return {
    client,
    async publish(topic, payload, { retain }) {
      await client.publishAsync(topic, payload, { qos: 1, retain });
    },
    async close() {
      await client.endAsync();
    },
  };
}

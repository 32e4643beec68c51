/**
 * A test subscriber standing in for the controller: MQTT.js in front of the controller's own intake
 * (`Ingest`, wire v1 and v2) and watermark publisher, so the sidecar under test gets the end-to-end
 * confirmations it waits for (ADR 0012). `confirm: false` publishes none (a controller that is away);
 * `durableDelayMs` makes each confirmation wait that long (a slow disk); `announce: true` publishes
 * the controller's retained `online` status once subscribed, as the controller's bridge does;
 * `client` adds MQTT options (the controller's credentials on a broker with identities).
 */
import mqtt, { type IClientOptions } from 'mqtt';
import { Ingest } from '../../../controller/src/runtime/ingest';
import { WatermarkPublisher } from '../../../controller/src/runtime/watermarks';
import { decodeMetricsPayload } from '../../../shared/src/decode';
import type { MetricsRecord } from '../../../shared/src/schemas';
import { CONTROLLER_STATUS_TOPIC } from '../../../shared/src/topics';

export interface Collected {
  /** Every record received, duplicates included (at-least-once), in arrival order. */
  records: MetricsRecord[];
  statuses: string[];
  invalid: number;
  /** Messages received on the metrics topic (a v2 message carries several records). */
  messages: number;
  /** Resolves once the subscription is (re)established after a broker restart. */
  resubscribed(): Promise<void>;
  close(): Promise<void>;
  /** Resolves when `pred` holds, polling every 20 ms; rejects after `ms`. */
  until(pred: () => boolean, ms?: number): Promise<void>;
}

/** Subscribes to one job's topics (`optimus/v1/<ns>/<job>/#`); every metrics payload is validated. */
export async function subscribe(
  url: string,
  filter: string,
  version: 4 | 5 = 4,
  o: { confirm?: boolean; durableDelayMs?: number; announce?: boolean; client?: IClientOptions } = {},
): Promise<Collected> {
  const client = await mqtt.connectAsync(url, {
    protocolVersion: version,
    reconnectPeriod: 50,
    clean: true,
    ...o.client,
  });
  const watermarks = new WatermarkPublisher({
    publisher: {
      publish: (topic, payload, { retain }) =>
        client.publishAsync(topic, payload, { qos: 1, retain }).then(() => {}),
    },
    durable: () => new Promise((resolve) => setTimeout(() => resolve(true), o.durableDelayMs ?? 0)),
    intervalMs: 50,
  });
  const out: Collected = {
    records: [],
    statuses: [],
    invalid: 0,
    messages: 0,
    resubscribed: async () => {
      while (!client.connected) await new Promise((r) => setTimeout(r, 20));
      await client.subscribeAsync(filter, { qos: 1 });
    },
    close: async () => {
      await watermarks.stop();
      // A retained status would outlive the test and reach every later sidecar on the broker.
      if (o.announce === true)
        await client.publishAsync(CONTROLLER_STATUS_TOPIC, '', { qos: 1, retain: true });
      await client.endAsync(true);
    },
    until: async (pred, ms = 10_000) => {
      const deadline = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > deadline) {
          throw new Error(
            `timed out; have ${out.records.length} records, statuses ${out.statuses.join(',')}`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
  // The controller's intake decides what is stored and so what the watermarks confirm; the records
  // the tests look at are every arrival, duplicates included, decoded on their own.
  const ingest = new Ingest({
    onRecord: () => 'stored',
    onStatus: (_t, s) => void out.statuses.push(s.state),
  });
  if (o.confirm !== false) ingest.listen(watermarks);
  client.on('message', (topic, payload) => {
    if (topic.endsWith('/stored')) return;
    if (topic.endsWith('/metrics')) {
      out.messages++;
      const m = decodeMetricsPayload(payload);
      if (!m.ok) out.invalid++;
      else
        for (const r of m.records) {
          if (r.ok) out.records.push(r.value);
          else out.invalid++;
        }
    }
    ingest.handle(topic, payload);
  });
  await client.subscribeAsync(filter, { qos: 1 });
  if (o.announce === true)
    await client.publishAsync(
      CONTROLLER_STATUS_TOPIC,
      JSON.stringify({ v: 1, state: 'online', ts: Date.now() }),
      { qos: 1, retain: true },
    );
  return out;
}

/** Distinct records by seq, in seq order (at-least-once delivery may repeat a seq). */
export const distinct = (records: readonly MetricsRecord[]): MetricsRecord[] =>
  [...new Map(records.map((r) => [r.seq, r])).values()].sort((a, b) => a.seq - b.seq);

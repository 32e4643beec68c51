/** A test subscriber (MQTT.js) collecting decoded metrics records and status messages. */
import mqtt from 'mqtt';
import { metricsRecordSchema, type MetricsRecord } from '../../../shared/src/schemas';

export interface Collected {
  records: MetricsRecord[];
  statuses: string[];
  invalid: number;
  /** Resolves once the subscription is (re)established after a broker restart. */
  resubscribed(): Promise<void>;
  close(): Promise<void>;
  /** Resolves when `pred` holds, polling every 20 ms; rejects after `ms`. */
  until(pred: () => boolean, ms?: number): Promise<void>;
}

/** Subscribes to one job's topics (`optimus/v1/<ns>/<job>/#`); every metrics payload is validated. */
export async function subscribe(url: string, filter: string, version: 4 | 5 = 4): Promise<Collected> {
  const client = await mqtt.connectAsync(url, { protocolVersion: version, reconnectPeriod: 50, clean: true });
  const out: Collected = {
    records: [],
    statuses: [],
    invalid: 0,
    resubscribed: async () => {
      while (!client.connected) await new Promise((r) => setTimeout(r, 20));
      await client.subscribeAsync(filter, { qos: 1 });
    },
    close: async () => {
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
  client.on('message', (topic, payload) => {
    const text = payload.toString('utf8');
    if (topic.endsWith('/status')) {
      out.statuses.push((JSON.parse(text) as { state: string }).state);
      return;
    }
    const r = metricsRecordSchema.safeParse(JSON.parse(text));
    if (r.success) out.records.push(r.data);
    else out.invalid++;
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return out;
}

/** Distinct records by seq, in seq order (at-least-once delivery may repeat a seq). */
export const distinct = (records: readonly MetricsRecord[]): MetricsRecord[] =>
  [...new Map(records.map((r) => [r.seq, r])).values()].sort((a, b) => a.seq - b.seq);

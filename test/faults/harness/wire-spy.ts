/**
 * A subscriber that sees every metrics message on the broker (wire v1 and v2) and remembers, per task
 * and seq, the content it carried: the same seq with two contents is the bug "seq reused".
 */
import mqtt, { type MqttClient } from 'mqtt';
import { decodeMetricsPayload } from '../../../shared/src/decode';
import { CONTROLLER_STATUS_TOPIC, METRICS_FILTER, parseTopic, taskKey } from '../../../shared/src/topics';

export interface WireSpy {
  readonly messages: () => number;
  /** Resolves when the controller announces `online` (its birth message on every connect) after `since`. */
  controllerOnline(since: number, ms: number): Promise<void>;
  /** Task keys with a seq seen under two different contents, with an example. */
  conflicts(): string[];
  close(): Promise<void>;
}

export async function spyOnWire(
  url: string,
  auth: { username?: string; password?: string } = {},
): Promise<WireSpy> {
  const client: MqttClient = await mqtt.connectAsync(url, { ...auth, reconnectPeriod: 200, clean: true });
  const seen = new Map<string, Map<number, string>>();
  const conflicts: string[] = [];
  let messages = 0;
  let onlineAt = 0;
  client.on('message', (topic, payload) => {
    if (topic === CONTROLLER_STATUS_TOPIC) {
      if (payload.toString().includes('"online"')) onlineAt = Date.now();
      return;
    }
    const t = parseTopic(topic);
    if (t?.kind !== 'metrics') return;
    messages++;
    const m = decodeMetricsPayload(payload);
    if (!m.ok) return;
    const key = taskKey(t.task);
    const seqs = seen.get(key) ?? new Map<number, string>();
    seen.set(key, seqs);
    for (const r of m.records) {
      if (!r.ok) continue;
      const body = JSON.stringify(r.value);
      const before = seqs.get(r.value.seq);
      if (before !== undefined && before !== body)
        conflicts.push(`${key} seq ${r.value.seq}: ${before} ≠ ${body}`);
      seqs.set(r.value.seq, body);
    }
  });
  // The subscription is re-made after a broker restart (mqtt.js resubscribes on a fresh session).
  await client.subscribeAsync([METRICS_FILTER, CONTROLLER_STATUS_TOPIC], { qos: 1 });
  return {
    messages: () => messages,
    controllerOnline: async (since, ms) => {
      const deadline = Date.now() + ms;
      while (onlineAt <= since) {
        if (Date.now() > deadline) throw new Error('the controller did not come online');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    conflicts: () => [...conflicts],
    close: () => client.endAsync(true),
  };
}

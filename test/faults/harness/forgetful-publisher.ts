/**
 * A publisher that trusts the broker, as MQTT clients do: each record (wire v1, QoS 1) is forgotten
 * once the broker acknowledged it. Unlike the sidecar it never resends, so every acknowledged record
 * it published must reach the controller's store through the broker alone — which checks that the
 * controller acknowledges nothing to the broker before storing it.
 */
import mqtt from 'mqtt';
import { metricsTopic, type TaskId } from '../../../shared/src/topics';

export interface ForgetfulPublisher {
  /** Seqs the broker acknowledged. */
  readonly acknowledged: number[];
  stop(): Promise<void>;
}

export async function publishForgetfully(
  url: string,
  task: TaskId,
  everyMs: number,
  auth: { username: string; password: string } | null = null,
): Promise<ForgetfulPublisher> {
  // With per-task identities the client id must be the task's (the broker binds them).
  const client = await mqtt.connectAsync(url, {
    clientId: auth?.username ?? `forgetful-${task.index}`,
    reconnectPeriod: 200,
    ...(auth ?? {}),
  });
  const acknowledged: number[] = [];
  let seq = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const s = seq++;
      const record = {
        v: 1,
        seq: s,
        ts: Date.now(),
        framework: 'mxnet',
        kind: 'batch',
        epoch: 0,
        batch: s,
        samplesPerSec: 100,
        stepTime: 0.32,
        loss: 1,
        lossName: 'cross-entropy',
        metrics: {},
      };
      // Not retried: a publish the broker did not acknowledge is simply not counted.
      await client
        .publishAsync(metricsTopic(task), JSON.stringify(record), { qos: 1 })
        .then(() => acknowledged.push(s))
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await loop;
      await client.endAsync(true);
    },
  };
}

/**
 * What the real sidecar bundle (`sidecar/dist/sidecar.cjs`, built by the suite's global setup)
 * puts on the wire for a given training log: every `(topic, payload)` it published, as bytes, in
 * arrival order. Readers of the wire are tested against this, not against payloads a test wrote
 * by hand (a hand-written v1 record hid that the sidecar sends v2 batches).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { aedesBroker } from '../../sidecar/test/helpers/broker';
import { spawnSidecar } from '../../sidecar/test/helpers/spawn';

export interface WireMessage {
  readonly topic: string;
  readonly payload: Buffer;
}

/**
 * Runs the sidecar on `lines` (job `ml/<job>`, worker 0) until `done(messages)` holds, then ends it
 * with its done marker. Nothing is left running: broker, sidecar and files go.
 */
export async function realSidecarOutput(
  job: string,
  lines: readonly string[],
  done: (messages: readonly WireMessage[]) => boolean,
  timeoutMs = 15_000,
): Promise<WireMessage[]> {
  const broker = await aedesBroker();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wire-'));
  const log = path.join(dir, 'train.log');
  const messages: WireMessage[] = [];
  const client = await mqtt.connectAsync(broker.url, { clean: true });
  try {
    client.on('message', (topic, payload) => messages.push({ topic, payload: Buffer.from(payload) }));
    await client.subscribeAsync(`optimus/v1/ml/${job}/#`, { qos: 1 });
    fs.writeFileSync(log, lines.map((l) => `${l}\n`).join(''));
    const sidecar = spawnSidecar(
      { log, broker: broker.sidecarUrl, 'batch-size': '32', 'confirm-wait-sec': '0' },
      { OPTIMUS_JOB: job },
    );
    try {
      const deadline = Date.now() + timeoutMs;
      while (!done(messages)) {
        if (Date.now() > deadline)
          throw new Error(`the sidecar sent ${messages.length} message(s) only:\n${sidecar.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      fs.writeFileSync(`${log}.done`, '');
      await Promise.race([sidecar.exited, new Promise((r) => setTimeout(r, 3000))]);
    } finally {
      sidecar.child.kill('SIGKILL');
    }
    return messages;
  } finally {
    await client.endAsync(true);
    await broker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedBroker } from '../local/broker';
import { startEmbeddedBroker } from '../local/broker';
import type { MqttBridge } from './mqtt-bridge';
import { connectBridge } from './mqtt-bridge';

let broker: EmbeddedBroker | undefined;
let bridge: MqttBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  await broker?.close();
});

const resetError = (): Error => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('connectBridge', () => {
  it('survives errors after the CONNACK: reports them, keeps the client, never throws', async () => {
    broker = await startEmbeddedBroker(0);
    const errors: Error[] = [];
    bridge = await connectBridge({
      url: broker.url,
      clientId: 'bridge-test',
      onMessage: () => {},
      onError: (err) => errors.push(err),
    });
    const client = bridge.client;
    // Without a listener, EventEmitter throws on 'error'; the old once-listener also ended the client.
    expect(() => client.emit('error', resetError())).not.toThrow();
    expect(() => client.emit('error', resetError())).not.toThrow();
    expect(client.disconnecting).toBe(false);
    expect(errors).toHaveLength(2);
    await bridge.publish('optimus/v1/test', 'still here', { retain: false });
  });

  it('rejects when the first connection fails', async () => {
    await expect(
      connectBridge({ url: 'mqtt://127.0.0.1:1', clientId: 'bridge-test-fail', onMessage: () => {} }),
    ).rejects.toThrow();
  });
});

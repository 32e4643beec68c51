/**
 * The controller notices when it is kicked (issue 28): on a broker that allows MQTT's session
 * takeover (an external one; the embedded one refuses it, `broker-access.test.ts`), another client
 * taking the controller's id closes the controller's connection, and the controller says so.
 */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { createBridge, type MqttBridge } from '../runtime/mqtt-bridge';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker';
import { noticeDisconnects } from './broker-disconnects';

let broker: EmbeddedBroker | null = null;
let bridge: MqttBridge | null = null;
afterEach(async () => {
  await bridge?.close();
  await broker?.close();
});

describe('controller connection', () => {
  it('logs when another client takes the controller’s id and the broker drops it', async () => {
    broker = await startEmbeddedBroker(0); // open, with MQTT's takeover rule
    bridge = createBridge({ url: broker.url, clientId: 'optimus-controller-x', onMessage: () => {} });
    const warned: unknown[] = [];
    noticeDisconnects(bridge, { warn: (o: unknown) => warned.push(o) } as never);
    await bridge.open();
    expect(warned).toEqual([]);
    const thief = await mqtt.connectAsync(broker.url, {
      clientId: 'optimus-controller-x',
      reconnectPeriod: 0,
    });
    for (let i = 0; i < 50 && warned.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await thief.endAsync(true);
    expect(warned).toEqual([{ drops: 1 }]);
  });
});

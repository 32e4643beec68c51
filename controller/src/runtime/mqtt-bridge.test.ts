import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedBroker } from '../local/broker';
import { startEmbeddedBroker } from '../local/broker';
import mqtt from 'mqtt';
import { Aedes } from 'aedes';
import net, { type AddressInfo } from 'node:net';
import type { MqttBridge } from './mqtt-bridge';
import { connectBridge, createBridge } from './mqtt-bridge';

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

  it('rejects when no broker answers before the open deadline', async () => {
    await expect(
      connectBridge({
        url: 'mqtt://127.0.0.1:1',
        clientId: 'bridge-test-fail',
        onMessage: () => {},
        openTimeoutMs: 800,
      }),
    ).rejects.toThrow();
  });

  it('keeps trying while the broker is not up yet (a restarting broker refuses or resets the socket)', async () => {
    const probe = await startEmbeddedBroker(0);
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const opening = connectBridge({
      url: `mqtt://127.0.0.1:${port}`,
      clientId: 'bridge-late',
      onMessage: () => {},
    });
    await new Promise((r) => setTimeout(r, 700));
    broker = await startEmbeddedBroker(port);
    bridge = await opening;
    expect(bridge.client.connected).toBe(true);
  });
});

describe('createBridge: nothing acknowledged before the runtime is ready (ADR 0012)', () => {
  it('leaves the queued records of its session at the broker until opened, even across a crash', async () => {
    broker = await startEmbeddedBroker(0);
    const url = broker.url;
    const got: string[] = [];
    const first = await connectBridge({ url, clientId: 'bridge-queue', onMessage: () => {} });
    await first.client.endAsync(true); // a persistent session, subscribed, now offline
    const pub = await mqtt.connectAsync(url, { clientId: 'pub' });
    for (let i = 0; i < 10; i++)
      await pub.publishAsync('optimus/v1/ml/a/worker/0/metrics', String(i), { qos: 1 });
    // A controller that starts, is killed before it is ready, and never opened its bridge.
    const dead = createBridge({
      url,
      clientId: 'bridge-queue',
      onMessage: (_t, p) => got.push(`dead:${String(p)}`),
    });
    await new Promise((r) => setTimeout(r, 300));
    await dead.close();
    bridge = createBridge({ url, clientId: 'bridge-queue', onMessage: (_t, p) => got.push(String(p)) });
    await bridge.open();
    for (let i = 0; i < 50 && got.length < 10; i++) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
    await pub.endAsync();
  });

  it('publishes its birth message again after the broker restarted empty, and subscribes again', async () => {
    broker = await startEmbeddedBroker(0);
    const port = broker.port;
    const got: string[] = [];
    bridge = createBridge({
      url: broker.url,
      clientId: 'bridge-birth',
      onMessage: (_t, p) => got.push(String(p)),
      birth: () => ({ topic: 'optimus/v1/controller/status', payload: '{"v":1,"state":"online","ts":1}' }),
    });
    await bridge.open();
    await broker.close();
    broker = await startEmbeddedBroker(port);
    const spy = await mqtt.connectAsync(broker.url, { clientId: 'spy', reconnectPeriod: 0 });
    const status: string[] = [];
    spy.on('message', (_t, p) => status.push(String(p)));
    await spy.subscribeAsync('optimus/v1/controller/status', { qos: 1 });
    for (let i = 0; i < 100 && status.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(status).toContain('{"v":1,"state":"online","ts":1}');
    await spy.publishAsync('optimus/v1/ml/a/worker/0/metrics', 'after', { qos: 1 });
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['after']);
    await spy.endAsync();
  });
});

describe('birth: announced only once the controller listens (ADR 0029)', () => {
  it('a record published on seeing the birth reaches the controller, on a first connect and after a restart', async () => {
    // The broker grants the controller's subscription 300 ms late: a birth sent before the SUBACK
    // would make the sidecars resend into a broker that has nobody to give the records to.
    const slowSubscribe = (client: { id: string }, sub: unknown, done: (e: null, s: unknown) => void): void =>
      void setTimeout(() => done(null, sub), client.id === 'bridge-announce' ? 300 : 0);
    const listen = async (port: number): Promise<{ close(): Promise<void>; port: number }> => {
      const aedes = await Aedes.createBroker({ authorizeSubscribe: slowSubscribe as never });
      const sockets = new Set<net.Socket>();
      const server = net.createServer((s) => {
        sockets.add(s);
        aedes.handle(s);
      });
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      return {
        port: (server.address() as AddressInfo).port,
        close: async () => {
          for (const s of sockets) s.destroy();
          await new Promise<void>((r) => aedes.close(() => r()));
          await new Promise<void>((r) => server.close(() => r()));
        },
      };
    };
    let b = await listen(0);
    const url = `mqtt://127.0.0.1:${b.port}`;
    const got: string[] = [];
    let births = 0;
    bridge = createBridge({
      url,
      clientId: 'bridge-announce',
      onMessage: (_t, p) => got.push(String(p)),
      birth: () => ({
        topic: 'optimus/v1/controller/status',
        payload: JSON.stringify({ v: 1, state: 'online', ts: ++births }),
      }),
    });
    // A sidecar stand-in: on every birth it sends what it holds, at once.
    const sidecar = await mqtt.connectAsync(url, { clientId: 'optimus.ml.a.worker.0', reconnectPeriod: 50 });
    sidecar.on('message', (_t, p) => {
      const { ts } = JSON.parse(String(p)) as { ts: number };
      void sidecar.publishAsync('optimus/v1/ml/a/worker/0/metrics', `sent on birth ${ts}`, { qos: 1 });
    });
    const watchBirth = (): Promise<unknown> =>
      sidecar.subscribeAsync('optimus/v1/controller/status', { qos: 0 });
    try {
      await watchBirth();
      await bridge.open();
      for (let i = 0; i < 100 && got.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
      expect(got).toEqual(['sent on birth 1']);
      await b.close();
      b = await listen(b.port);
      for (let i = 0; i < 100 && !sidecar.connected; i++) await new Promise((r) => setTimeout(r, 20));
      await watchBirth();
      for (let i = 0; i < 150 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(got).toEqual(['sent on birth 1', 'sent on birth 2']);
    } finally {
      await sidecar.endAsync(true);
      await bridge.close();
      bridge = undefined;
      await b.close();
    }
  });
});

describe('open', () => {
  it('subscribes again when the connection drops before the SUBACK (it does not fail the start)', async () => {
    let drops = 2;
    const aedes = await Aedes.createBroker({
      authorizeSubscribe: (client, sub, done) => {
        // The first two SUBSCRIBEs lose their connection before any SUBACK.
        if (drops > 0) {
          drops -= 1;
          client.conn.destroy();
          return;
        }
        done(null, sub);
      },
    });
    const server = net.createServer((s) => aedes.handle(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const got: string[] = [];
      bridge = await connectBridge({
        url: `mqtt://127.0.0.1:${port}`,
        clientId: 'bridge-drop',
        onMessage: (_t, p) => got.push(String(p)),
      });
      expect(drops).toBe(0);
      const pub = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: 'pub-drop' });
      await pub.publishAsync('optimus/v1/ml/a/worker/0/metrics', 'x', { qos: 1 });
      for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(got).toEqual(['x']);
      await pub.endAsync();
      await bridge.close();
      bridge = undefined;
    } finally {
      await new Promise<void>((r) => aedes.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

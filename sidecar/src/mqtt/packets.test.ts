// Cross-checks the hand-written packets against mqtt-packet (the codec MQTT.js and aedes use).
import * as mqttPacket from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import {
  decodeConnack,
  decodePuback,
  encodeConnect,
  encodePublish,
  PacketReader,
  type ProtocolVersion,
} from './packets';

function decodeWithMqttPacket(buf: Buffer, version: ProtocolVersion): mqttPacket.Packet[] {
  const parser = mqttPacket.parser({ protocolVersion: version });
  const out: mqttPacket.Packet[] = [];
  parser.on('packet', (p: mqttPacket.Packet) => out.push(p));
  parser.on('error', (e: Error) => {
    throw e;
  });
  parser.parse(buf);
  return out;
}

describe.each([4, 5] as const)('MQTT %s packets', (version) => {
  it('CONNECT with will, credentials and keep-alive decodes as sent', () => {
    const buf = encodeConnect({
      version,
      clientId: 'optimus-ml-job-worker-0',
      keepaliveSec: 30,
      username: 'user',
      password: 'sécret',
      will: {
        topic: 'optimus/v1/ml/job/worker/0/status',
        payload: '{"v":1,"state":"lost","ts":1}',
        retain: true,
      },
    });
    const [p] = decodeWithMqttPacket(buf, version) as mqttPacket.IConnectPacket[];
    expect(p).toMatchObject({
      cmd: 'connect',
      protocolVersion: version,
      clientId: 'optimus-ml-job-worker-0',
      keepalive: 30,
      clean: true,
      username: 'user',
    });
    expect(p?.password?.toString()).toBe('sécret');
    expect(p?.will).toMatchObject({ topic: 'optimus/v1/ml/job/worker/0/status', qos: 1, retain: true });
    expect(p?.will?.payload.toString()).toBe('{"v":1,"state":"lost","ts":1}');
  });

  it('PUBLISH at QoS 1 with dup/retain and a payload over 127 bytes (multi-byte length)', () => {
    const payload = 'x'.repeat(20_000);
    const buf = encodePublish({ version, topic: 't/é', payload, packetId: 65535, dup: true, retain: true });
    const [p] = decodeWithMqttPacket(buf, version) as mqttPacket.IPublishPacket[];
    expect(p).toMatchObject({
      cmd: 'publish',
      topic: 't/é',
      qos: 1,
      messageId: 65535,
      dup: true,
      retain: true,
    });
    expect(p?.payload.toString()).toBe(payload);
  });

  it('reads CONNACK and PUBACK from mqtt-packet, split at every byte', () => {
    const connack = mqttPacket.generate(
      version === 5
        ? {
            cmd: 'connack',
            sessionPresent: false,
            reasonCode: 0,
            properties: { receiveMaximum: 20, assignedClientIdentifier: 'x', userProperties: { a: 'b' } },
          }
        : { cmd: 'connack', sessionPresent: false, returnCode: 0 },
      { protocolVersion: version },
    );
    const puback = mqttPacket.generate(
      { cmd: 'puback', messageId: 7, ...(version === 5 ? { reasonCode: 0x87 } : {}) },
      { protocolVersion: version },
    );
    const all = Buffer.concat([connack, puback]);
    const reader = new PacketReader();
    const got = [];
    for (let i = 0; i < all.length; i++) got.push(...reader.push(all.subarray(i, i + 1)));
    expect(got.map((p) => p.type)).toEqual([2, 4]);
    expect(decodeConnack(got[0]!.body, version)).toEqual({
      code: 0,
      receiveMaximum: version === 5 ? 20 : null,
    });
    expect(decodePuback(got[1]!.body)).toEqual({ packetId: 7, code: version === 5 ? 0x87 : 0 });
  });
});

it('refuses a malformed remaining length', () => {
  expect(() => new PacketReader().push(Buffer.from([0x20, 0xff, 0xff, 0xff, 0xff, 0x01]))).toThrow(
    /malformed/,
  );
});

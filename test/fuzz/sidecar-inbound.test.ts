/**
 * Property-based fuzzing of what the sidecar decodes from the network: MQTT packets from the broker
 * (a broken or hostile broker, a torn stream) and the two retained messages it follows. A decoder may
 * refuse (the connection then drops and reconnects), never crash the process with anything but an
 * Error, never hang, and never turn garbage into a watermark that would let records go.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseControllerStatus, parseWatermark } from '../../sidecar/src/delivery/watermark';
import {
  decodeConnack,
  decodeIncomingPublish,
  decodePuback,
  decodeSuback,
  PacketReader,
} from '../../sidecar/src/mqtt/packets';
import { RUNS } from './runs';

/** Runs `fn`; an Error is a refusal, anything else thrown is a bug. */
const refusesOrAnswers = (fn: () => unknown): void => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
  }
};

describe('MQTT packets from the broker (sidecar/src/mqtt/packets.ts)', () => {
  it('the packet reader splits any byte stream, in any chunks, without hanging or losing bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), (chunks) => {
        const reader = new PacketReader();
        let consumed = 0;
        for (const c of chunks) {
          let packets: { body: Buffer }[] = [];
          try {
            packets = reader.push(Buffer.from(c));
          } catch (err) {
            expect(err).toBeInstanceOf(Error); // a malformed length: the connection is dropped
            return;
          }
          for (const p of packets) consumed += p.body.length;
        }
        expect(consumed).toBeLessThanOrEqual(chunks.reduce((n, c) => n + c.length, 0));
      }),
      { numRuns: RUNS.mqttPacketsFromBroker },
    );
  });

  it('every body decoder refuses or answers, for MQTT 3.1.1 and 5', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.integer({ min: 0, max: 15 }),
        fc.constantFrom<4 | 5>(4, 5),
        (body, flags, version) => {
          const b = Buffer.from(body);
          refusesOrAnswers(() => decodeConnack(b, version));
          refusesOrAnswers(() => decodePuback(b));
          refusesOrAnswers(() => decodeSuback(b, version));
          refusesOrAnswers(() => {
            const p = decodeIncomingPublish(flags, b, version);
            expect(typeof p.topic).toBe('string');
            expect(p.payload.length).toBeLessThanOrEqual(b.length);
          });
        },
      ),
      { numRuns: RUNS.mqttBodies },
    );
  });
});

describe('retained messages the sidecar follows (sidecar/src/delivery/watermark.ts)', () => {
  const json = fc.oneof(
    fc.jsonValue(),
    fc.record({
      v: fc.constantFrom(1, 2, '1'),
      from: fc.oneof(fc.integer(), fc.double(), fc.string()),
      through: fc.oneof(fc.integer(), fc.double()),
      ts: fc.anything(),
    }),
    fc.record({
      v: fc.constant(1),
      state: fc.constantFrom('online', 'offline', 'lost', ''),
      ts: fc.oneof(fc.integer(), fc.string()),
    }),
  );
  it('never throws, and a watermark it accepts is a real range of safe integers', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          json.map((j) => Buffer.from(JSON.stringify(j) ?? '')),
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
        ),
        (payload) => {
          const w = parseWatermark(payload);
          if (w !== null) {
            expect(Number.isSafeInteger(w.from) && Number.isSafeInteger(w.through)).toBe(true);
            expect(0 <= w.from && w.from <= w.through).toBe(true);
          }
          const s = parseControllerStatus(payload);
          if (s !== null) expect(typeof s.ts).toBe('number');
        },
      ),
      { numRuns: RUNS.retainedMessages },
    );
  });
});

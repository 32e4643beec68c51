/**
 * The handful of MQTT 3.1.1 / 5 control packets the sidecar needs, encoded and decoded by hand: it
 * publishes at QoS 1 and subscribes at QoS 0 to two retained topics (its watermark and the controller's
 * status, ADR 0012). A full client library (MQTT.js) would triple the bundle and the resident memory of
 * every training pod.
 */

export type ProtocolVersion = 4 | 5;

export const PacketType = {
  CONNECT: 1,
  CONNACK: 2,
  PUBLISH: 3,
  PUBACK: 4,
  SUBSCRIBE: 8,
  SUBACK: 9,
  PINGREQ: 12,
  PINGRESP: 13,
  DISCONNECT: 14,
} as const;

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 128;
    out.push(byte);
  } while (n > 0);
  return out;
}

const str = (s: string | Buffer): Buffer => {
  const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
};

const packet = (first: number, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from([first, ...varint(body.length)]), body]);

export interface WillMessage {
  topic: string;
  payload: string;
  retain: boolean;
}

export interface ConnectOptions {
  version: ProtocolVersion;
  clientId: string;
  keepaliveSec: number;
  username?: string | undefined;
  password?: string | undefined;
  will?: WillMessage | undefined;
}

/** CONNECT with a clean session: the sidecar keeps its own outbox, so broker-side sessions are not needed. */
export function encodeConnect(o: ConnectOptions): Buffer {
  let flags = 0x02;
  if (o.username !== undefined) flags |= 0x80;
  if (o.password !== undefined) flags |= 0x40;
  if (o.will !== undefined) flags |= 0x04 | (1 << 3) | (o.will.retain ? 0x20 : 0);
  const header = Buffer.from([
    0,
    4,
    77,
    81,
    84,
    84,
    o.version,
    flags,
    o.keepaliveSec >> 8,
    o.keepaliveSec & 255,
  ]);
  const parts: Buffer[] = [header];
  if (o.version === 5) parts.push(Buffer.from([0]));
  parts.push(str(o.clientId));
  if (o.will !== undefined) {
    if (o.version === 5) parts.push(Buffer.from([0]));
    parts.push(str(o.will.topic), str(o.will.payload));
  }
  if (o.username !== undefined) parts.push(str(o.username));
  if (o.password !== undefined) parts.push(str(o.password));
  return packet(0x10, Buffer.concat(parts));
}

export interface PublishOptions {
  version: ProtocolVersion;
  topic: string;
  payload: string;
  packetId: number;
  retain?: boolean;
  dup?: boolean;
}

/** PUBLISH at QoS 1 (the only QoS the sidecar uses), written into one buffer: this runs per record. */
export function encodePublish(o: PublishOptions): Buffer {
  const topicLen = Buffer.byteLength(o.topic);
  const payloadLen = Buffer.byteLength(o.payload);
  const remaining = 2 + topicLen + 2 + (o.version === 5 ? 1 : 0) + payloadLen;
  const lenBytes = varint(remaining);
  const buf = Buffer.allocUnsafe(1 + lenBytes.length + remaining);
  let at = 0;
  buf[at++] = 0x32 | (o.dup === true ? 0x08 : 0) | (o.retain === true ? 0x01 : 0);
  for (const b of lenBytes) buf[at++] = b;
  at = buf.writeUInt16BE(topicLen, at);
  at += buf.write(o.topic, at, 'utf8');
  at = buf.writeUInt16BE(o.packetId, at);
  if (o.version === 5) buf[at++] = 0; // no properties
  buf.write(o.payload, at, 'utf8');
  return buf;
}

/** SUBSCRIBE at QoS 0 to `topics` (each reaches us at most once; the retained copy on every subscribe). */
export function encodeSubscribe(
  version: ProtocolVersion,
  packetId: number,
  topics: readonly string[],
): Buffer {
  const parts: Buffer[] = [Buffer.from([packetId >> 8, packetId & 255])];
  if (version === 5) parts.push(Buffer.from([0])); // no properties
  for (const t of topics) parts.push(str(t), Buffer.from([0])); // QoS 0 (v5: no-local etc. off)
  return packet(0x82, Buffer.concat(parts));
}

/** SUBACK: the packet id and one return/reason code per topic (≥ 0x80: refused). */
export function decodeSuback(body: Buffer, version: ProtocolVersion): { packetId: number; codes: number[] } {
  let at = 2;
  if (version === 5) {
    const [len, next] = readVarint(body, at);
    at = next + len;
  }
  return { packetId: body.readUInt16BE(0), codes: [...body.subarray(at)] };
}

export interface IncomingPublish {
  topic: string;
  payload: Buffer;
  qos: number;
  packetId: number | null;
}

/** A PUBLISH from the broker (one of our subscriptions); throws on a malformed packet. */
export function decodeIncomingPublish(
  flags: number,
  body: Buffer,
  version: ProtocolVersion,
): IncomingPublish {
  const qos = (flags >> 1) & 3;
  const topicLen = body.readUInt16BE(0);
  let at = 2 + topicLen;
  if (at > body.length) throw new Error('malformed PUBLISH');
  const topic = body.toString('utf8', 2, at);
  let packetId: number | null = null;
  if (qos > 0) {
    packetId = body.readUInt16BE(at);
    at += 2;
  }
  if (version === 5) {
    const [len, next] = readVarint(body, at);
    at = next + len;
  }
  if (at > body.length) throw new Error('malformed PUBLISH');
  return { topic, payload: body.subarray(at), qos, packetId };
}

/** PUBACK we send for a QoS 1 message from the broker (the broker only downgrades, so rare). */
export const encodePuback = (packetId: number): Buffer =>
  Buffer.from([0x40, 2, packetId >> 8, packetId & 255]);

export const PINGREQ = Buffer.from([0xc0, 0]);
export const DISCONNECT = Buffer.from([0xe0, 0]);

export interface IncomingPacket {
  type: number;
  flags: number;
  body: Buffer;
}

/** Accumulates bytes and yields whole packets; throws on a malformed length (the caller drops the connection). */
export class PacketReader {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): IncomingPacket[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: IncomingPacket[] = [];
    for (;;) {
      const p = this.next();
      if (p === null) return out;
      out.push(p);
    }
  }

  private next(): IncomingPacket | null {
    const b = this.buf;
    if (b.length < 2) return null;
    let len = 0;
    let mult = 1;
    let i = 1;
    for (;;) {
      if (i >= b.length) return null;
      const byte = b[i] as number;
      len += (byte & 127) * mult;
      i++;
      if ((byte & 128) === 0) break;
      mult *= 128;
      if (i > 4) throw new Error('malformed remaining length');
    }
    if (b.length < i + len) return null;
    const first = b[0] as number;
    const p = { type: first >> 4, flags: first & 15, body: b.subarray(i, i + len) };
    this.buf = b.subarray(i + len);
    return p;
  }
}

export interface Connack {
  code: number;
  /** MQTT 5 Receive Maximum: how many QoS 1 messages the broker accepts in flight. */
  receiveMaximum: number | null;
}

/** Property value sizes by identifier (MQTT 5 §2.2.2.2); -1 string/binary, -2 string pair, -3 varint. */
const PROP_SIZE: Record<number, number> = {
  0x01: 1,
  0x02: 4,
  0x03: -1,
  0x08: -1,
  0x09: -1,
  0x0b: -3,
  0x11: 4,
  0x12: -1,
  0x13: 2,
  0x15: -1,
  0x16: -1,
  0x17: 1,
  0x18: 4,
  0x19: 1,
  0x1a: -1,
  0x1c: -1,
  0x1f: -1,
  0x21: 2,
  0x22: 2,
  0x23: 2,
  0x24: 1,
  0x25: 1,
  0x26: -2,
  0x27: 4,
  0x28: 1,
  0x29: 1,
  0x2a: 1,
};

function readVarint(b: Buffer, at: number): [number, number] {
  let value = 0;
  let mult = 1;
  for (let i = at; i < at + 4 && i < b.length; i++) {
    const byte = b[i] as number;
    value += (byte & 127) * mult;
    if ((byte & 128) === 0) return [value, i + 1];
    mult *= 128;
  }
  throw new Error('malformed varint');
}

/** Reads the return/reason code and, for MQTT 5, the Receive Maximum property. */
export function decodeConnack(body: Buffer, version: ProtocolVersion): Connack {
  const code = body[1] ?? 255;
  if (version === 4 || body.length <= 2) return { code, receiveMaximum: null };
  let receiveMaximum: number | null = null;
  const [propLen, start] = readVarint(body, 2);
  let i = start;
  while (i < start + propLen) {
    const id = body[i++] as number;
    const size = PROP_SIZE[id];
    if (size === undefined) break;
    if (id === 0x21) receiveMaximum = body.readUInt16BE(i);
    if (size > 0) i += size;
    else if (size === -3) i = readVarint(body, i)[1];
    else if (size === -1) i += 2 + body.readUInt16BE(i);
    else {
      const first = body.readUInt16BE(i);
      i += 4 + first + body.readUInt16BE(i + 2 + first);
    }
  }
  return { code, receiveMaximum };
}

/** PUBACK: packet id and (MQTT 5) reason code; ≥ 0x80 means the broker refused the message. */
export function decodePuback(body: Buffer): { packetId: number; code: number } {
  return { packetId: body.readUInt16BE(0), code: body.length > 2 ? (body[2] as number) : 0 };
}

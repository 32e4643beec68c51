/**
 * One MQTT session at a time, reconnecting with capped exponential backoff. It knows nothing about
 * records: the courier decides what to (re)send after each connect and is told about every PUBACK.
 * After each CONNACK it subscribes (QoS 0) to the topics it was given and hands what arrives on
 * them to `onMessage` (the sidecar follows its watermark and the controller's status, ADR 0012).
 */
import net from 'node:net';
import type * as Tls from 'node:tls';
import {
  type ConnectOptions,
  DISCONNECT,
  decodeConnack,
  decodeIncomingPublish,
  decodePuback,
  decodeSuback,
  encodeConnect,
  encodePuback,
  encodePublish,
  encodeSubscribe,
  PacketReader,
  PacketType,
  PINGREQ,
  type ProtocolVersion,
  type WillMessage,
} from './packets';

export type VersionChoice = ProtocolVersion | 'auto';

export interface TlsFiles {
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
}

export interface ConnectionOptions {
  /** `mqtt://host:port` or `mqtts://host:port` (`tcp://`, `ssl://`, `tls://` also accepted). */
  url: string;
  version: VersionChoice;
  clientId: string;
  username?: string | undefined;
  password?: string | undefined;
  tls?: TlsFiles | undefined;
  keepaliveSec: number;
  will?: WillMessage | undefined;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  onConnect: (receiveMaximum: number | null) => void;
  onDisconnect: (reason: string) => void;
  onAck: (packetId: number, ok: boolean) => void;
  /** Subscribed at QoS 0 after every CONNACK (the session is clean, so every time). */
  subscriptions?: readonly string[] | undefined;
  /** A message on one of the subscriptions. */
  onMessage?: ((topic: string, payload: Buffer) => void) | undefined;
  /** The broker refused a subscription (an ACL): reported once per connect. */
  onSubscribeRefused?: ((topics: readonly string[]) => void) | undefined;
  /**
   * Asked after each read from the broker: true when acknowledgements may wait for the next
   * {@link MqttConnection.pollAcks} call (see there). Omitted: read everything as it arrives.
   */
  acksMayWait?: (() => boolean) | undefined;
}

/** Parses and checks a broker URL; throws a message naming what is wrong. */
export function parseBrokerUrl(url: string): { host: string; port: number; secure: boolean } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url}`);
  }
  const proto = u.protocol.replace(/:$/, '');
  const secure = proto === 'mqtts' || proto === 'ssl' || proto === 'tls';
  if (!secure && proto !== 'mqtt' && proto !== 'tcp')
    throw new Error(`unsupported scheme ${proto}: (use mqtt:// or mqtts://)`);
  const port = u.port === '' ? (secure ? 8883 : 1883) : Number(u.port);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port, secure };
}

/** The packet id SUBSCRIBE uses; publishes never take it (see the courier). */
export const SUBSCRIBE_PACKET_ID = 65535;

/** A self-healing MQTT connection for a publishing client that follows a few retained topics. */
export class MqttConnection {
  private socket: net.Socket | null = null;
  private connected = false;
  private stopped = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private awaitingPing = false;
  private version: ProtocolVersion;
  private readonly target: ReturnType<typeof parseBrokerUrl>;
  /** Loaded only for mqtts:// — OpenSSL initialisation costs a few MB of resident memory. */
  private tls: typeof Tls | null = null;
  /** Encoded PUBLISH packets not yet written: {@link flush} sends them together (one syscall). */
  private outgoing: Buffer[] = [];
  /** Plain TCP sockets read into this buffer (`onread`), which lets reading stop between polls. */
  private readonly readBuf = Buffer.allocUnsafe(16 * 1024);

  constructor(private readonly opts: ConnectionOptions) {
    this.target = parseBrokerUrl(opts.url);
    this.version = opts.version === 'auto' ? 5 : opts.version;
  }

  /** True between CONNACK and the socket closing. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** The protocol version in use (after any `auto` fallback). */
  get protocolVersion(): ProtocolVersion {
    return this.version;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.target.secure) this.tls = await import('node:tls');
    this.open();
  }

  /** Writes a QoS 1 PUBLISH; false when not connected (the courier resends after reconnect). */
  publish(
    topic: string,
    payload: string,
    packetId: number,
    flags: { retain?: boolean; dup?: boolean } = {},
  ): boolean {
    if (!this.connected || this.socket === null) return false;
    this.outgoing.push(encodePublish({ version: this.version, topic, payload, packetId, ...flags }));
    return true;
  }

  /** Writes the publishes queued since the last flush, in one write (one TCP segment when small). */
  flush(): void {
    const s = this.socket;
    const parts = this.outgoing;
    this.outgoing = [];
    if (s === null || parts.length === 0) return;
    s.write(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
  }

  /**
   * Reads whatever the broker has sent since the last poll. Between polls a plain TCP socket is not
   * read while {@link ConnectionOptions.acksMayWait} says so: at a steady trickle of records the
   * acknowledgements of one batch are then read at the next batch's wake-up instead of waking the
   * process on their own (half of all wake-ups). A closed connection is noticed at the next poll
   * or write; the caller polls at least every few seconds.
   */
  pollAcks(): void {
    this.socket?.resume();
  }

  /** Stops reconnecting; sends DISCONNECT when `graceful` (no Last Will), else just drops the socket. */
  async stop(graceful: boolean): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    const s = this.socket;
    // A socket that already closed (between its destroy and our close handler) emits no 'close' again.
    if (s === null || s.closed) return;
    this.flush();
    await new Promise<void>((resolve) => {
      s.once('close', () => resolve());
      if (graceful && this.connected) s.end(DISCONNECT);
      else s.destroy();
      // Bounded whatever the socket does: a stopping sidecar must exit.
      setTimeout(() => {
        s.destroy();
        resolve();
      }, 1000).unref();
    });
  }

  private open(): void {
    const { host, port, secure } = this.target;
    const t = this.opts.tls;
    const s =
      secure && this.tls !== null
        ? this.tls.connect({
            host,
            port,
            ca: t?.ca,
            cert: t?.cert,
            key: t?.key,
            servername: net.isIP(host) === 0 ? host : undefined,
          })
        : net.connect({
            host,
            port,
            // Returning false stops reading until `resume()` (`pollAcks`); TLS keeps reading eagerly.
            onread: { buffer: this.readBuf, callback: (n, buf) => onData(Buffer.from(buf.subarray(0, n))) },
          });
    this.socket = s;
    this.outgoing = [];
    s.setNoDelay(true);
    const reader = new PacketReader();
    const connectTimeout = setTimeout(() => s.destroy(new Error('connect timeout')), 10_000);
    s.once(secure ? 'secureConnect' : 'connect', () => s.write(encodeConnect(this.connectPacket())));
    const onData = (chunk: Buffer): boolean => {
      try {
        for (const p of reader.push(chunk)) this.onPacket(p.type, p.flags, p.body, connectTimeout);
      } catch (err) {
        s.destroy(err as Error);
        return false;
      }
      return !(this.connected && this.opts.acksMayWait?.() === true);
    };
    if (secure) s.on('data', onData);
    s.on('error', () => undefined);
    s.once('close', () => {
      clearTimeout(connectTimeout);
      this.onClose(s);
    });
  }

  private connectPacket(): ConnectOptions {
    const o = this.opts;
    return {
      version: this.version,
      clientId: o.clientId,
      keepaliveSec: o.keepaliveSec,
      username: o.username,
      password: o.password,
      will: o.will,
    };
  }

  private onPacket(type: number, flags: number, body: Buffer, connectTimeout: NodeJS.Timeout): void {
    if (type === PacketType.CONNACK) {
      clearTimeout(connectTimeout);
      const ack = decodeConnack(body, this.version);
      if (ack.code !== 0) {
        this.socket?.destroy(new Error(`broker refused connection (code ${ack.code})`));
        return;
      }
      this.connected = true;
      this.attempt = 0;
      this.startPing();
      const subs = this.opts.subscriptions ?? [];
      // Before the courier's publishes: the retained watermark then arrives as early as possible.
      if (subs.length > 0) this.socket?.write(encodeSubscribe(this.version, SUBSCRIBE_PACKET_ID, subs));
      this.opts.onConnect(ack.receiveMaximum);
    } else if (type === PacketType.PUBACK) {
      const { packetId, code } = decodePuback(body);
      this.opts.onAck(packetId, code < 0x80);
    } else if (type === PacketType.PUBLISH) {
      const msg = decodeIncomingPublish(flags, body, this.version);
      if (msg.qos > 0 && msg.packetId !== null) this.socket?.write(encodePuback(msg.packetId));
      this.opts.onMessage?.(msg.topic, msg.payload);
    } else if (type === PacketType.SUBACK) {
      const { codes } = decodeSuback(body, this.version);
      const subs = this.opts.subscriptions ?? [];
      const refused = subs.filter((_t, i) => (codes[i] ?? 0x80) >= 0x80);
      if (refused.length > 0) this.opts.onSubscribeRefused?.(refused);
    } else if (type === PacketType.PINGRESP) {
      this.awaitingPing = false;
    } else if (type === PacketType.DISCONNECT) {
      this.socket?.destroy();
    }
  }

  private startPing(): void {
    this.awaitingPing = false;
    this.pingTimer = setInterval(() => {
      if (this.awaitingPing) {
        this.socket?.destroy(new Error('keepalive timeout'));
        return;
      }
      this.awaitingPing = true;
      this.socket?.write(PINGREQ);
      this.socket?.resume(); // the PINGRESP must be read before the next round even if nothing polls
    }, this.opts.keepaliveSec * 1000);
  }

  private onClose(s: net.Socket): void {
    if (this.socket !== s) return;
    const wasConnected = this.connected;
    this.connected = false;
    this.socket = null;
    this.clearTimers();
    // `auto`: a broker that refuses MQTT 5 (aedes) or hangs up before CONNACK gets 3.1.1 next time.
    if (!wasConnected && this.opts.version === 'auto' && this.version === 5) this.version = 4;
    this.opts.onDisconnect(wasConnected ? 'connection closed' : 'connect failed');
    if (this.stopped) return;
    const delay = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectMinMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.timer = setTimeout(() => this.open(), delay * (0.75 + Math.random() * 0.5));
  }

  private clearTimers(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    this.timer = null;
    this.pingTimer = null;
  }
}

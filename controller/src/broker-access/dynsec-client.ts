/**
 * Mosquitto's dynamic-security plugin, driven over MQTT: commands go to `$CONTROL/dynamic-security/v1`,
 * answers come back on `…/response`, matched by correlation data. The client needs the plugin's admin
 * rights (the chart's init container makes the controller's user the admin).
 */
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';

const COMMAND_TOPIC = '$CONTROL/dynamic-security/v1';
const RESPONSE_TOPIC = `${COMMAND_TOPIC}/response`;
const TIMEOUT_MS = 10_000;

export interface DynsecCommand {
  readonly command: string;
  readonly [field: string]: unknown;
}

export interface DynsecResponse {
  readonly command: string;
  /** Absent on success, e.g. "Client already exists". */
  readonly error?: string;
  /** What a `get…` command returns. */
  readonly data?: Record<string, unknown>;
}

export class DynsecClient {
  private readonly waiting = new Map<string, (r: DynsecResponse) => void>();
  private subscribed: Promise<unknown> | null = null;

  constructor(private readonly client: MqttClient) {
    client.on('message', (topic, payload) => {
      if (topic === RESPONSE_TOPIC) this.onResponse(payload);
    });
  }

  /** Runs commands in one message; resolves with one response per command, in order. */
  async exec(commands: readonly DynsecCommand[]): Promise<DynsecResponse[]> {
    if (commands.length === 0) return [];
    this.subscribed ??= this.client.subscribeAsync(RESPONSE_TOPIC, { qos: 1 });
    await this.subscribed;
    const ids = commands.map(() => randomUUID());
    const answers = ids.map((id) => new Promise<DynsecResponse>((resolve) => this.waiting.set(id, resolve)));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('the broker did not answer dynamic-security commands')),
        TIMEOUT_MS,
      );
    });
    try {
      const body = { commands: commands.map((c, i) => ({ ...c, correlationData: ids[i] })) };
      // The publish too is raced: a broker that drops the connection never acknowledges it.
      const sent = this.client.publishAsync(COMMAND_TOPIC, JSON.stringify(body), { qos: 1 });
      return await Promise.race([sent.then(() => Promise.all(answers)), timeout]);
    } finally {
      clearTimeout(timer);
      for (const id of ids) this.waiting.delete(id);
    }
  }

  /**
   * Sends commands without waiting for an answer: for a change to our own user, after which the
   * broker disconnects us (the answer is then lost with the connection).
   */
  send(commands: readonly DynsecCommand[]): void {
    // QoS 0: the acknowledgement would never come, and a resend after reconnecting would repeat it.
    this.client.publish(COMMAND_TOPIC, JSON.stringify({ commands }), { qos: 0 });
  }

  private onResponse(payload: Buffer): void {
    let parsed: {
      responses?: { command?: unknown; error?: unknown; data?: unknown; correlationData?: unknown }[];
    };
    try {
      parsed = JSON.parse(payload.toString('utf8')) as typeof parsed;
    } catch {
      return;
    }
    for (const r of parsed.responses ?? []) {
      const done = typeof r.correlationData === 'string' ? this.waiting.get(r.correlationData) : undefined;
      done?.({
        command: String(r.command),
        ...(typeof r.error === 'string' ? { error: r.error } : {}),
        ...(typeof r.data === 'object' && r.data !== null ? { data: r.data as Record<string, unknown> } : {}),
      });
    }
  }
}

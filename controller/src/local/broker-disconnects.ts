/** The controller says so whenever the broker drops its connection (ADR 0031). */
import type { Logger } from 'pino';
import type { MqttBridge } from '../runtime/mqtt-bridge';

/**
 * The controller must notice when the broker drops it (the embedded broker never lets another
 * client take the controller's id, ADR 0031; an external one might, or restart).
 */
export function noticeDisconnects(bridge: Pick<MqttBridge, 'client'>, log: Pick<Logger, 'warn'>): void {
  let drops = 0;
  let up = false;
  bridge.client.on('connect', () => (up = true));
  bridge.client.on('close', () => {
    // Once per lost connection, not once per failed reconnect attempt.
    if (!up || bridge.client.disconnecting) return;
    up = false;
    drops += 1;
    log.warn(
      { drops },
      "the broker closed the controller's connection (broker restarted, or another client with the controller's id); reconnecting",
    );
  });
}

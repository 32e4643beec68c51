/**
 * The retained `plan` message of each job, sent when it changes: the broker keeps the last one, so
 * re-sending an unchanged plan every round (a finished job's for ever) only costs traffic.
 */
import { planTopic } from '../../../shared/src/topics';
import type { Clock } from './clock';
import type { Publisher } from './controller-options';
import { planMessage, type JobEntry } from './job-entry';

export class PlanPublisher {
  /** Topic → the last plan sent, without its timestamp. */
  private readonly sent = new Map<string, string>();

  constructor(
    private readonly publisher: Publisher,
    private readonly onError: (err: unknown, topic: string) => void,
  ) {}

  /** Sends the job's plan if it differs from the last one sent. Never awaited, never throws. */
  publish(e: JobEntry, clock: Clock): void {
    if (this.publisher.discards === true) return;
    const topic = planTopic({ namespace: e.rec.spec.namespace, job: e.rec.spec.name });
    const msg = planMessage(e, clock);
    const { ts: _ts, ...content } = msg;
    const key = JSON.stringify(content);
    if (this.sent.get(topic) === key) return;
    this.sent.set(topic, key);
    this.send(topic, JSON.stringify(msg));
  }

  /** Clears a job's retained plan (the job was removed). */
  clear(topic: string): void {
    this.sent.delete(topic);
    this.send(topic, '');
  }

  private send(topic: string, payload: string): void {
    // Calls are made in order, so the retained plan still ends on the latest one.
    this.publisher.publish(topic, payload, { retain: true }).catch((err: unknown) => {
      // Not sent: the next change (or round) tries again.
      this.sent.delete(topic);
      this.onError(err, topic);
    });
  }
}

/** The webhook's counts as `optimus_webhook_reviews_total{outcome}` (prom-client, read at scrape time). */
import { Counter, type Registry } from 'prom-client';
import type { WebhookStats } from './webhook-server';

export const WEBHOOK_REVIEWS_METRIC = 'optimus_webhook_reviews_total' as const;

/**
 * Registers the counter on `registry`. `stats` is read at every scrape, so it may be undefined
 * until the webhook has started (then nothing is reported).
 */
export function registerWebhookMetrics(registry: Registry, stats: () => WebhookStats | undefined): void {
  new Counter({
    name: WEBHOOK_REVIEWS_METRIC,
    help:
      'AdmissionReviews answered by the sidecar-injection webhook, by outcome (injected, unidentified, ' +
      'malformed, excluded, …; refused = not an AdmissionReview)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(stats() ?? {})) this.inc({ outcome }, n);
    },
  });
}

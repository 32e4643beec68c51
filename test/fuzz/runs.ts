/**
 * How many inputs each property-based test tries (fast-check `numRuns`). One table, so the README's
 * "inputs tried" figure is the sum of what really runs (`npx vitest run test/fuzz` prints it too).
 */
export const RUNS = {
  metricsPayloadBytes: 3000,
  metricsPayloadJson: 3000,
  metricsRecordMutations: 5000,
  metricsBatches: 1000,
  ingestMessages: 2000,
  ingestTopics: 1000,
  statusPayloads: 1000,
  mqttPacketsFromBroker: 3000,
  mqttBodies: 3000,
  retainedMessages: 3000,
  httpRequests: 1500,
  admissionReviews: 2000,
  admissionPodMutations: 1500,
} as const;

export const TOTAL_RUNS = Object.values(RUNS).reduce((a, b) => a + b, 0);

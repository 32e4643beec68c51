import { describe, expect, it } from 'vitest';
import { CONTROLLER_STATUS_TOPIC, metricsTopic, parseTopic, planTopic, statusTopic } from './topics';

const task = { namespace: 'ml', job: 'resnet-50', role: 'worker', index: 3 } as const;

describe('topics', () => {
  it.each([
    ['metrics', metricsTopic(task), 'optimus/v1/ml/resnet-50/worker/3/metrics'],
    ['status', statusTopic(task), 'optimus/v1/ml/resnet-50/worker/3/status'],
    ['plan', planTopic(task), 'optimus/v1/ml/resnet-50/plan'],
  ])('builds the %s topic', (_name, built, expected) => {
    expect(built).toBe(expected);
  });

  it('round-trips every topic through parseTopic', () => {
    expect(parseTopic(metricsTopic(task))).toEqual({ kind: 'metrics', task });
    expect(parseTopic(statusTopic(task))).toEqual({ kind: 'status', task });
    expect(parseTopic(planTopic(task))).toEqual({ kind: 'plan', job: { namespace: 'ml', job: 'resnet-50' } });
    expect(parseTopic(CONTROLLER_STATUS_TOPIC)).toEqual({ kind: 'controller-status' });
  });

  it.each([
    ['foreign root', 'other/v1/ml/j/worker/0/metrics'],
    ['bad role', 'optimus/v1/ml/j/chief/0/metrics'],
    ['bad index', 'optimus/v1/ml/j/worker/x/metrics'],
    ['negative index', 'optimus/v1/ml/j/worker/-1/metrics'],
    ['upper-case name', 'optimus/v1/ML/j/worker/0/metrics'],
    ['unknown leaf', 'optimus/v1/ml/j/worker/0/logs'],
    ['too short', 'optimus/v1/ml'],
  ])('rejects %s', (_name, topic) => {
    expect(parseTopic(topic)).toBeNull();
  });
});

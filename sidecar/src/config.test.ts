import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type SidecarConfig } from './config';

const ENV = {
  OPTIMUS_NAMESPACE: 'ml',
  OPTIMUS_JOB: 'resnet',
  OPTIMUS_ROLE: 'worker',
  OPTIMUS_INDEX: '3',
  OPTIMUS_BROKER_URL: 'mqtt://broker:1883',
  OPTIMUS_LOG_PATH: '/logs/train.log',
};
const load = (env: Record<string, string | undefined>, argv: string[] = []): SidecarConfig => {
  const c = loadConfig(argv, env);
  if (c === 'help') throw new Error('help');
  return c;
};

describe('loadConfig', () => {
  it('reads the webhook environment with defaults', () => {
    const c = load(ENV);
    expect(c.task).toEqual({ namespace: 'ml', job: 'resnet', role: 'worker', index: 3 });
    expect(c).toMatchObject({
      format: 'auto',
      mqttVersion: 4,
      batchSize: null,
      doneFile: '/logs/train.log.done',
      stateDir: '/logs/.optimus-sidecar',
    });
  });

  it.each([
    ['a Deployment pod (random name): a stable hash', 'train-7d9f8c6b5-x2k4q', 'hash'],
    ['a StatefulSet pod: its ordinal', 'web-3', 3],
  ])('derives the index from OPTIMUS_POD_NAME for %s (ADR 0038)', (_what, podName, want) => {
    const env = { ...ENV, OPTIMUS_INDEX: undefined, OPTIMUS_POD_NAME: podName };
    const a = load(env).task.index;
    expect(load(env).task.index).toBe(a);
    if (want === 'hash') {
      expect(a).toBeGreaterThanOrEqual(0);
      expect(a).not.toBe(load({ ...env, OPTIMUS_POD_NAME: 'train-7d9f8c6b5-q9zzm' }).task.index);
    } else expect(a).toBe(want);
    expect(load({ ...env, OPTIMUS_INDEX: '5' }).task.index).toBe(5); // an explicit index still wins
  });

  it('starts without a password when an optional password file is missing, and still refuses a required one', () => {
    const missing = path.join(os.tmpdir(), 'optimus-no-such-password');
    const env = { ...ENV, OPTIMUS_BROKER_PASSWORD_FILE: missing };
    expect(load({ ...env, OPTIMUS_BROKER_PASSWORD_OPTIONAL: 'true' }).password).toBeUndefined();
    expect(() => load(env)).toThrow(/OPTIMUS_BROKER_PASSWORD_FILE.*cannot read/);
  });

  it('lets flags override variables', () => {
    const c = load(ENV, [
      '--index',
      '7',
      '--format',
      'keras',
      '--mqtt-version',
      '5',
      '--batch-size',
      '64',
      '--log',
      '-',
    ]);
    expect(c).toMatchObject({
      task: { index: 7 },
      format: 'keras',
      mqttVersion: 5,
      batchSize: 64,
      logPath: '-',
      doneFile: null,
      stateDir: null,
    });
  });

  it('reads the password file without its trailing newline, and TLS files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
    fs.writeFileSync(path.join(dir, 'pw'), 's3cret\n');
    fs.writeFileSync(path.join(dir, 'ca.pem'), 'CA');
    const c = load({
      ...ENV,
      OPTIMUS_BROKER_USERNAME: 'u',
      OPTIMUS_BROKER_PASSWORD_FILE: path.join(dir, 'pw'),
      OPTIMUS_BROKER_CA_FILE: path.join(dir, 'ca.pem'),
    });
    expect(c.username).toBe('u');
    expect(c.password).toBe('s3cret');
    expect(c.ca?.toString()).toBe('CA');
  });

  it.each([
    ['a missing broker', { OPTIMUS_BROKER_URL: undefined }, 'OPTIMUS_BROKER_URL (--broker) is required'],
    ['a missing log', { OPTIMUS_LOG_PATH: '' }, 'OPTIMUS_LOG_PATH (--log) is required'],
    ['a bad role', { OPTIMUS_ROLE: 'chief' }, 'OPTIMUS_ROLE (--role) must be ps, worker, scheduler'],
    ['a negative index', { OPTIMUS_INDEX: '-1' }, 'OPTIMUS_INDEX (--index) must be an integer'],
    ['an uppercase namespace', { OPTIMUS_NAMESPACE: 'ML' }, 'OPTIMUS_NAMESPACE (--namespace) is not valid'],
    ['a job name too long', { OPTIMUS_JOB: 'j'.repeat(64) }, 'OPTIMUS_JOB (--job) is not valid'],
    ['an unknown format', { OPTIMUS_LOG_FORMAT: 'caffe' }, 'OPTIMUS_LOG_FORMAT (--format) must be one of'],
    [
      'a bad MQTT version',
      { OPTIMUS_MQTT_VERSION: '3' },
      'OPTIMUS_MQTT_VERSION (--mqtt-version) must be 4, 5 or auto',
    ],
    [
      'a zero batch size',
      { OPTIMUS_BATCH_SIZE: '0' },
      'OPTIMUS_BATCH_SIZE (--batch-size) must be an integer ≥ 1',
    ],
    ['a websocket URL', { OPTIMUS_BROKER_URL: 'ws://b:80' }, 'OPTIMUS_BROKER_URL (--broker) must look like'],
    [
      'an unreadable password file',
      { OPTIMUS_BROKER_PASSWORD_FILE: '/nonexistent/pw' },
      'OPTIMUS_BROKER_PASSWORD_FILE (--password-file): cannot read',
    ],
  ])('rejects %s, naming the variable', (_name, patch, message) => {
    expect(() => load({ ...ENV, ...patch })).toThrow(ConfigError);
    expect(() => load({ ...ENV, ...patch })).toThrow(message);
  });

  it('rejects unknown flags', () => {
    expect(() => load(ENV, ['--brokr', 'x'])).toThrow(ConfigError);
  });

  it('answers --help', () => {
    expect(loadConfig(['--help'], {})).toBe('help');
  });
});

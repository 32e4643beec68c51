import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, readSecretFile } from './env';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      httpPort: 8080,
      webhookPort: 8443,
      policy: 'optimus',
      schedulingIntervalSec: 600,
      restartCostSec: 60,
      leaderElection: true,
      leaseName: 'optimus-controller',
      logLevel: 'info',
      brokerUrl: undefined,
    });
    expect(c.sidecarResources).toEqual({
      requests: { cpu: '10m', memory: '48Mi' },
      limits: { memory: '96Mi' },
    });
  });

  it('reads values and lets the sidecar broker default to the controller broker', () => {
    const c = loadConfig({
      OPTIMUS_BROKER_URL: 'mqtt://broker:1883',
      OPTIMUS_HTTP_PORT: '9090',
      OPTIMUS_LEADER_ELECTION: 'false',
      OPTIMUS_SCHEDULING_INTERVAL_SEC: '30.5',
    });
    expect(c).toMatchObject({
      brokerUrl: 'mqtt://broker:1883',
      sidecarBrokerUrl: 'mqtt://broker:1883',
      httpPort: 9090,
      leaderElection: false,
      schedulingIntervalSec: 30.5,
    });
  });

  it('lets flag overrides win but ignores undefined ones', () => {
    const c = loadConfig({ OPTIMUS_POLICY: 'drf' }, { policy: 'tetris', httpPort: 0 });
    expect(c.policy).toBe('tetris');
    expect(c.httpPort).toBe(0);
    expect(loadConfig({ OPTIMUS_POLICY: 'drf' }, { policy: undefined } as never).policy).toBe('drf');
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ OPTIMUS_HTTP_PORT: '' }).httpPort).toBe(8080);
  });

  it.each([
    ['port not a number', { OPTIMUS_HTTP_PORT: 'eighty' }, 'OPTIMUS_HTTP_PORT'],
    ['port out of range', { OPTIMUS_WEBHOOK_PORT: '70000' }, 'OPTIMUS_WEBHOOK_PORT'],
    ['bad broker scheme', { OPTIMUS_BROKER_URL: 'http://x' }, 'OPTIMUS_BROKER_URL'],
    ['zero interval', { OPTIMUS_SCHEDULING_INTERVAL_SEC: '0' }, 'OPTIMUS_SCHEDULING_INTERVAL_SEC'],
    ['bad boolean', { OPTIMUS_LEADER_ELECTION: 'maybe' }, 'OPTIMUS_LEADER_ELECTION'],
    ['bad resources JSON', { OPTIMUS_SIDECAR_RESOURCES: '{' }, 'OPTIMUS_SIDECAR_RESOURCES'],
    ['bad log level', { OPTIMUS_LOG_LEVEL: 'loud' }, 'OPTIMUS_LOG_LEVEL'],
  ])('rejects %s with an error naming the variable', (_name, env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it('quotes the value of the variable when the error lies inside its JSON', () => {
    const value = '{"requests":{"cpu":1}}';
    expect(() => loadConfig({ OPTIMUS_SIDECAR_RESOURCES: value })).toThrow(`(got "${value}")`);
  });
});

describe('readSecretFile', () => {
  it('reads and trims, and names the variable on failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    writeFileSync(join(dir, 't'), 'secret\n');
    expect(readSecretFile(join(dir, 't'), 'OPTIMUS_API_TOKEN_FILE')).toBe('secret');
    expect(() => readSecretFile(join(dir, 'missing'), 'OPTIMUS_API_TOKEN_FILE')).toThrow(
      /OPTIMUS_API_TOKEN_FILE: cannot read/,
    );
    writeFileSync(join(dir, 'e'), '\n');
    expect(() => readSecretFile(join(dir, 'e'), 'OPTIMUS_API_TOKEN_FILE')).toThrow(/empty/);
  });
});

/**
 * Composition of per-job broker access for Kubernetes mode (ADR 0013): Mosquitto dynamic-security
 * identities plus a Secret per job in the job's namespace, both keyed to the OptimusJob's lifecycle
 * through `withBrokerAccess`. Off unless `OPTIMUS_BROKER_IDENTITIES=dynsec` (the chart sets it for its
 * bundled broker); with an external broker, access is the operator's business.
 */
import type { MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { DynsecClient } from '../../broker-access/dynsec-client';
import { DynsecIdentities } from '../../broker-access/identities';
import { JobAccess } from '../../broker-access/job-access';
import type { ControllerConfig } from '../../config/env';
import { SecretCredentials } from './broker-credentials';
import type { KubernetesBackend } from '../index';

export function brokerAccess(o: {
  cfg: ControllerConfig;
  backend: KubernetesBackend;
  /** The controller's MQTT client (it may not be connected yet). */
  client: MqttClient;
  password: string | undefined;
  log: Logger;
}): JobAccess | null {
  const { cfg, backend } = o;
  if (cfg.brokerIdentities !== 'dynsec') return null;
  if (!cfg.brokerUsername || !o.password)
    throw new Error(
      'OPTIMUS_BROKER_IDENTITIES=dynsec needs OPTIMUS_BROKER_USERNAME and OPTIMUS_BROKER_PASSWORD_FILE',
    );
  return new JobAccess({
    identities: new DynsecIdentities(new DynsecClient(o.client), cfg.brokerUsername),
    credentials: new SecretCredentials({
      clients: backend.clients,
      owner: (j) => backend.jobs.list().find((e) => e.id === `${j.namespace}/${j.job}`)?.job,
    }),
    // Job passwords derive from the controller's own secret: nothing more to keep; rotating it rotates all.
    key: `optimus-job-credentials:${o.password}`,
    onError: (err, job) => o.log.warn({ err, job }, 'broker access'),
  });
}

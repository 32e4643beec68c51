/**
 * A job deleted and created again under the same name gets new broker credentials (issue 28): the
 * password is salted by the OptimusJob's uid, so what leaked from the first job opens nothing for the
 * second. Through the real composition of per-job access (`withBrokerAccess`, `JobAccess`, the
 * Secret store) against the strict API double.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerIdentities } from '../../controller/src/broker-access/identities';
import { JobAccess } from '../../controller/src/broker-access/job-access';
import { jobPassword, type JobIdentity } from '../../controller/src/broker-access/job-identity';
import { jobIdentityOf } from '../../controller/src/broker-access/with-broker-access';
import {
  BROKER_SECRET_PASSWORD_KEY,
  jobBrokerSecretName,
  SecretCredentials,
} from '../../controller/src/k8s/broker/broker-credentials';
import type { OptimusJob } from '../../controller/src/k8s/api/optimus-job';
import { startTestCluster, type TestCluster } from './cluster-fixture';

let cluster: TestCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

/** The broker side, recorded: which password each job's identities were given. */
function recordingIdentities(): BrokerIdentities & { passwords: Map<string, string> } {
  const passwords = new Map<string, string>();
  return {
    passwords,
    ensureController: () => Promise.resolve(),
    ensureJob: (j: JobIdentity, password: string) => {
      passwords.set(`${j.namespace}/${j.job}`, password);
      return Promise.resolve();
    },
    removeJob: (j: JobIdentity) => {
      passwords.delete(`${j.namespace}/${j.job}`);
      return Promise.resolve();
    },
  };
}

describe('per-job credentials across a job re-created under the same name', () => {
  it('salts the password with the uid: the new job gets a new password, in its Secret and on the broker', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 8, memory: 32 * 1024 ** 3 } }], {
      namespaces: ['ml'],
    });
    const c = cluster;
    let live: OptimusJob | undefined;
    const identities = recordingIdentities();
    const access = new JobAccess({
      identities,
      credentials: new SecretCredentials({ clients: c.clients, owner: () => live }),
      key: 'the controller key',
    });
    await access.reconcile();
    const grant = async (): Promise<string> => {
      live = await c.job('ml', 'cifar');
      const identity = jobIdentityOf(
        { namespace: 'ml', name: 'cifar', maxPs: 1, maxWorkers: 2 },
        live.metadata.uid,
      );
      await access.grant(identity, 5000);
      const secret = await c.clients.core.readNamespacedSecret({
        namespace: 'ml',
        name: jobBrokerSecretName('cifar'),
      });
      return Buffer.from(secret.data?.[BROKER_SECRET_PASSWORD_KEY] ?? '', 'base64').toString();
    };

    await c.submit({ name: 'cifar', namespace: 'ml' });
    const first = await grant();
    const firstUid = live?.metadata.uid;
    expect(identities.passwords.get('ml/cifar')).toBe(first);

    await access.revoke('ml/cifar');
    await c.clients.custom.deleteNamespacedCustomObject({
      group: 'optimus.dev',
      version: 'v1alpha2',
      namespace: 'ml',
      plural: 'optimusjobs',
      name: 'cifar',
    });
    await c.submit({ name: 'cifar', namespace: 'ml' });
    const second = await grant();

    expect(live?.metadata.uid).not.toBe(firstUid);
    expect(second).not.toBe(first);
    expect(identities.passwords.get('ml/cifar')).toBe(second);
    // Derived, not random: the same creation always gets the same password (a new leader re-derives it).
    expect(second).toBe(
      jobPassword('the controller key', { namespace: 'ml', job: 'cifar', salt: live?.metadata.uid }),
    );
    access.close();
  });
});

/**
 * Kubernetes side of per-job broker access (ADR 0013): a job's credential is a Secret in the job's own
 * namespace, `<job>-optimus-broker` (key `password`), owned by the OptimusJob so the garbage collector
 * removes it with the job even if the controller never gets to. Injected sidecars mount it and log in
 * as their task (`optimus.<ns>.<job>.<role>.<index>`): nothing is copied between namespaces.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { CredentialStore } from '../../broker-access/job-access';
import type { JobIdentity } from '../../broker-access/job-identity';
import type { KubeClients } from '../api/clients';
import { statusCodeOf } from '../api/clients';
import { LABEL_JOB } from '../api/names';
import type { OptimusJob } from '../api/optimus-job';
import { ownerReferenceOf } from '../rollout/pod-builder';

export const jobBrokerSecretName = (job: string): string => `${job}-optimus-broker`;
export const BROKER_SECRET_PASSWORD_KEY = 'password' as const;

export interface SecretCredentialsOptions {
  readonly clients: KubeClients;
  /** The OptimusJob that owns the Secret (from the informer); none: the Secret has no owner. */
  readonly owner: (job: JobIdentity) => OptimusJob | undefined;
}

export class SecretCredentials implements CredentialStore {
  constructor(private readonly o: SecretCredentialsOptions) {}

  async put(job: JobIdentity, password: string): Promise<void> {
    const owner = this.o.owner(job);
    const body: V1Secret = {
      metadata: {
        name: jobBrokerSecretName(job.job),
        namespace: job.namespace,
        labels: { [LABEL_JOB]: job.job, 'app.kubernetes.io/managed-by': 'optimus' },
        ...(owner ? { ownerReferences: [ownerReferenceOf(owner)] } : {}),
      },
      type: 'Opaque',
      data: { [BROKER_SECRET_PASSWORD_KEY]: Buffer.from(password).toString('base64') },
    };
    const core = this.o.clients.core;
    try {
      await core.createNamespacedSecret({ namespace: job.namespace, body });
      return;
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw err;
    }
    const current = await core.readNamespacedSecret({ namespace: job.namespace, name: body.metadata!.name! });
    if (current.data?.[BROKER_SECRET_PASSWORD_KEY] === body.data?.[BROKER_SECRET_PASSWORD_KEY]) return;
    const resourceVersion = current.metadata?.resourceVersion;
    await core.replaceNamespacedSecret({
      namespace: job.namespace,
      name: body.metadata!.name!,
      body: { ...body, metadata: { ...body.metadata, ...(resourceVersion ? { resourceVersion } : {}) } },
    });
  }

  async remove(job: JobIdentity): Promise<void> {
    try {
      await this.o.clients.core.deleteNamespacedSecret({
        namespace: job.namespace,
        name: jobBrokerSecretName(job.job),
      });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
    }
  }
}

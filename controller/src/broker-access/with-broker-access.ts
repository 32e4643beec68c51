/**
 * A Backend that gives each job its broker access with its lifecycle: the one place where job
 * admission and removal meet broker identities, so no backend needs to know about either.
 */
import type { Backend, BackendEvents, JobReport } from '../runtime/backend';
import type { JobSpec } from '../runtime/job-spec';
import type { JobAccess } from './job-access';
import type { JobIdentity } from './job-identity';

/** How long admission waits for the broker before it goes ahead (access keeps being retried). */
const GRANT_WAIT_MS = 5000;

export const jobIdentityOf = (
  spec: Pick<JobSpec, 'namespace' | 'name' | 'maxPs' | 'maxWorkers'>,
  salt?: string,
): JobIdentity => ({
  namespace: spec.namespace,
  job: spec.name,
  maxPs: spec.maxPs,
  maxWorkers: spec.maxWorkers,
  ...(salt === undefined ? {} : { salt }),
});

/**
 * `saltOf`: what tells this creation of a job from an earlier one of the same name (Kubernetes: its
 * uid), so that a job created again gets new credentials.
 */
export function withBrokerAccess(
  inner: Backend,
  access: JobAccess,
  saltOf: (spec: JobSpec) => string | undefined = () => undefined,
): Backend {
  return {
    get executor() {
      return inner.executor;
    },
    observe: () => inner.observe(),
    async admit(spec, o) {
      await access.grant(jobIdentityOf(spec, saltOf(spec)), GRANT_WAIT_MS);
      await inner.admit(spec, o);
    },
    async remove(jobId) {
      await inner.remove(jobId);
      await access.revoke(jobId);
    },
    attach: (events: BackendEvents) => inner.attach(events),
    ...(inner.reportJobs ? { reportJobs: (r: readonly JobReport[]) => inner.reportJobs?.(r) } : {}),
    close: async () => {
      access.close();
      await inner.close();
    },
  };
}

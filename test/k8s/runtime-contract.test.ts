/**
 * The runtime contract on Kubernetes: the shipped controller over the Kubernetes backend and the
 * API double, faults injected the way a cluster fails — pods whose image cannot be pulled
 * (`ErrImagePull`: a failed start, a failed resize and a failed rollback), and a kubelet that never
 * starts them (a rollout that never confirms: the runtime gives up, the executor's wait aborts and
 * the half-started set is deleted).
 */
import type { Fault } from '../contracts/runtime-contract';
import { describeRuntimeContract } from '../contracts/runtime-contract';
import { CONTRACT_SERVERS } from '../contracts/executor-contract';
import type { KubernetesBackend } from '../../controller/src/k8s';
import { KubernetesRuntimeBackend } from '../../controller/src/k8s/runtime-backend';
import type { Backend } from '../../controller/src/runtime/backend';
import type { JobSpec } from '../../controller/src/runtime/job-spec';
import { startBackend, until } from './backend-fixture';
import { startTestCluster } from './cluster-fixture';

/** Each job gets an image of its own, so a fault hits its pods only. */
const imageOf = (name: string) => `mxnet/python:${name}`;
const jobOfImage = (image: string) => image.slice(image.lastIndexOf(':') + 1);

describeRuntimeContract('kubernetes', async () => {
  const faults = new Map<string, Fault>();
  const faultOf = (image: string) => faults.get(`default/${jobOfImage(image)}`);
  const cluster = await startTestCluster(CONTRACT_SERVERS, {
    badImage: (image) => faultOf(image) === 'fail',
    neverStart: (pod) =>
      (pod['spec'] as { containers: { image: string }[] }).containers.some(
        (c) => faultOf(c.image) === 'hang',
      ),
  });
  const k: KubernetesBackend = startBackend(cluster, 'controller-0', {
    executor: {
      recheckMs: 50,
      // Longer than the contract's rollout timeout: a set that never starts is the runtime's to give up.
      timings: {
        startTimeoutMs: 20_000,
        unschedulableGraceMs: 0,
        stopSlackMs: 5000,
        checkpointReportLagMs: 100,
      },
    },
  });
  await k.start();
  await until(() => k.leader.isLeader());
  const rt = new KubernetesRuntimeBackend(k, { debounceMs: 20 });
  // In Kubernetes a job exists as an OptimusJob before the runtime admits it: the user creates it.
  const admit = async (spec: JobSpec) => {
    await cluster.submit({
      namespace: spec.namespace,
      name: spec.name,
      mode: spec.mode,
      image: imageOf(spec.name),
      psDemand: spec.psDemand,
      workerDemand: spec.workerDemand,
    });
    await until(() => k.jobs.list().some((e) => e.id === `${spec.namespace}/${spec.name}`));
    return rt.admit(spec);
  };
  const backend: Backend = {
    executor: rt.executor,
    observe: () => rt.observe(),
    admit,
    remove: (id) => rt.remove(id),
    attach: (events) => rt.attach(events),
    reportJobs: (reports) => rt.reportJobs(reports),
    close: () => rt.close(),
  };
  const idle = () =>
    cluster
      .pods()
      .every(
        (p) =>
          !p.metadata?.deletionTimestamp &&
          ['Running', 'Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
      );
  return {
    backend,
    inject: (id, fault) => (fault ? faults.set(id, fault) : faults.delete(id)),
    // The kubelet double has run or removed what it will (held pods stay Pending: give up on them).
    settle: async () => {
      for (let i = 0; i < 50 && !idle(); i++) await new Promise((r) => setTimeout(r, 10));
    },
    close: async () => {
      await rt.close();
      await k.stop();
      await cluster.close();
    },
  };
});

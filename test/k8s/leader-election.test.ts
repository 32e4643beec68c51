import { V1MicroTime } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesBackend } from '../../controller/src/k8s';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { startBackend, until } from './backend-fixture';

const NODES = [{ name: 'n1', capacity: { cpu: 8, memory: 32 * 1024 ** 3 } }];
let cluster: TestCluster;
const backends: KubernetesBackend[] = [];

afterEach(async () => {
  for (const b of backends.splice(0)) await b.stop();
  await cluster.close();
});

const leaders = () => backends.filter((b) => b.leader.isLeader()).length;

describe('leader election on a Lease: two controllers, one API', () => {
  it('elects exactly one leader; only it may execute; a stopped leader hands over at once', async () => {
    cluster = await startTestCluster(NODES);
    const [a, b] = [startBackend(cluster, 'controller-a'), startBackend(cluster, 'controller-b')];
    backends.push(a, b);
    await Promise.all([a.start(), b.start()]);
    await until(() => leaders() === 1);
    // Stays at one leader over several renew periods.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 100));
      expect(leaders()).toBe(1);
    }
    const [leader, follower] = a.leader.isLeader() ? [a, b] : [b, a];
    const refused = await follower.executor.execute({
      actions: [{ kind: 'suspend', jobId: 'default/x', reason: 'r' }],
    });
    expect(refused.failed[0]?.error).toMatch(/not the leader/);
    const lease = await cluster.clients.coordination.readNamespacedLease({
      namespace: 'optimus-system',
      name: 'optimus-controller',
    });
    expect(lease.spec?.holderIdentity).toBe(leader === a ? 'controller-a' : 'controller-b');

    const t0 = Date.now();
    await leader.stop();
    backends.splice(backends.indexOf(leader), 1);
    await until(() => follower.leader.isLeader(), 3000);
    // Released, so the follower does not wait out the 1 s lease.
    expect(Date.now() - t0).toBeLessThan(900);
    const after = await cluster.clients.coordination.readNamespacedLease({
      namespace: 'optimus-system',
      name: 'optimus-controller',
    });
    expect(after.spec?.leaseTransitions).toBe(1);
  });

  it('takes over a lease whose holder stopped renewing, only after the lease duration', async () => {
    cluster = await startTestCluster(NODES);
    await cluster.clients.coordination.createNamespacedLease({
      namespace: 'optimus-system',
      body: {
        metadata: { name: 'optimus-controller' },
        spec: {
          holderIdentity: 'crashed-pod',
          leaseDurationSeconds: 1,
          renewTime: new V1MicroTime(Date.now()),
          leaseTransitions: 3,
        },
      },
    });
    const b = startBackend(cluster, 'controller-b');
    backends.push(b);
    const t0 = Date.now();
    await b.start();
    await until(() => b.leader.isLeader(), 3000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    const lease = await cluster.clients.coordination.readNamespacedLease({
      namespace: 'optimus-system',
      name: 'optimus-controller',
    });
    expect(lease.spec).toMatchObject({ holderIdentity: 'controller-b', leaseTransitions: 4 });
  });
});

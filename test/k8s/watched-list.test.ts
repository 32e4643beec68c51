import type { V1Node } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFor } from '../../controller/src/k8s/api/kube-config';
import { WatchedList } from '../../controller/src/k8s/api/watched-list';
import type { TestCluster } from './cluster-fixture';
import { startTestCluster } from './cluster-fixture';
import { CONTROLLER_TOKEN } from './backend-fixture';

let cluster: TestCluster | undefined;
let list: WatchedList<V1Node> | undefined;
afterEach(async () => {
  await list?.stop();
  await cluster?.close();
});

describe('WatchedList', () => {
  it('resolves start() only once a list has succeeded, retrying a failed first list', async () => {
    cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 4, memory: 8 * 1024 ** 3 } }]);
    const errors: unknown[] = [];
    let calls = 0;
    const c = cluster;
    list = new WatchedList<V1Node>({
      config: kubeConfigFor(c.double.url, CONTROLLER_TOKEN),
      path: '/api/v1/nodes',
      list: () => (++calls === 1 ? Promise.reject(new Error('API not ready')) : c.clients.core.listNode()),
      restartDelayMs: 20,
      onError: (err) => errors.push(err),
    });
    await list.start();
    expect(list.items().map((n) => n.metadata?.name)).toEqual(['n1']);
    expect(list.hasSynced).toBe(true);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { rbacRules } from '../../controller/src/k8s';
import { SecretCredentials } from '../../controller/src/k8s/broker/broker-credentials';
import { allowedBy } from '../../controller/src/k8s/api/crd';
import { CredentialsDistributor } from '../../controller/src/k8s/broker/credentials';
import { startTestCluster } from './cluster-fixture';
import { CONTROLLER_TOKEN, startBackend, until } from './backend-fixture';
import { jobRecordOf, storedRecord, storeOf } from './store-fixture';

describe('RBAC rules (charts/optimus/files/rbac-rules.yaml)', () => {
  it('cover every API call the controller makes, and every rule is used', async () => {
    const cluster = await startTestCluster([{ name: 'n1', capacity: { cpu: 8, memory: 32 * 1024 ** 3 } }]);
    // With a namespace selector, as the chart runs it: the namespaces informer is used too.
    const backend = startBackend(cluster, 'controller-0', {
      namespaceSelector: 'kubernetes.io/metadata.name=default',
    });
    try {
      await backend.start();
      await until(() => backend.leader.isLeader());
      await until(() => cluster.double.requests.filter((r) => r.resource === 'leases').length >= 4); // renewals
      await cluster.submit({ name: 'j' });
      const placement = [
        { role: 'ps' as const, index: 0, server: 'n1' },
        { role: 'worker' as const, index: 0, server: 'n1' },
      ];
      await backend.executor.execute({
        actions: [{ kind: 'start', jobId: 'default/j', shape: { ps: 1, workers: 1 }, placement }],
      });
      await backend.executor.execute({
        actions: [
          {
            kind: 'resize',
            jobId: 'default/j',
            from: { ps: 1, workers: 1 },
            shape: { ps: 1, workers: 1 },
            placement,
          },
        ],
      });
      await until(() => backend.jobs.active().length === 1);
      const store = storeOf(backend);
      await store.load();
      store.appendRecord(storedRecord({ job: 'j', seq: 1 }));
      await store.saveDocument({
        v: 1,
        originMs: 0,
        decisions: 1,
        jobs: [jobRecordOf(backend, 'default/j')],
      });
      await store.flush(); // creates the ConfigMap
      store.appendRecord(storedRecord({ job: 'j', seq: 2 }));
      await store.close(); // updates it
      await storeOf(backend).load(); // reads it
      await backend.status.report('default/j', { progress: 0.5 });
      // Per-job broker credentials (ADR 0013): created, rotated, removed with the job.
      const secrets = new SecretCredentials({ clients: backend.clients, owner: () => undefined });
      const job = { namespace: 'default', job: 'j', maxPs: 1, maxWorkers: 1 };
      await secrets.put(job, 'first');
      await secrets.put(job, 'second');
      await secrets.remove(job);
      // The sidecar credentials: read the source in the home namespace, copy it, update the copy.
      await cluster.clients.core.createNamespacedSecret({
        namespace: 'optimus-system',
        body: {
          metadata: { name: 'optimus-broker-sidecar' },
          stringData: { username: 'sidecar', password: 'a' },
        },
      });
      const credentials = new CredentialsDistributor({
        clients: backend.clients,
        sourceNamespace: 'optimus-system',
        sourceName: 'optimus-broker-sidecar',
        targetName: 'optimus-broker-sidecar',
      });
      expect(await credentials.ensure('default')).toBe('created');
      await cluster.clients.core.replaceNamespacedSecret({
        namespace: 'optimus-system',
        name: 'optimus-broker-sidecar',
        body: {
          metadata: { name: 'optimus-broker-sidecar' },
          stringData: { username: 'sidecar', password: 'b' },
        },
      });
      expect(await credentials.ensure('default')).toBe('updated');
    } finally {
      await backend.stop();
      await cluster.close();
    }
    const rules = rbacRules();
    const calls = cluster.double.requests.filter((r) => r.user === CONTROLLER_TOKEN);
    const uncovered = calls
      .filter((c) => !allowedBy(rules, c.group, c.resource, c.verb))
      .map((c) => `${c.verb} ${c.group}/${c.resource}`);
    expect(uncovered).toEqual([]);
    const used = new Set(calls.map((c) => `${c.group}|${c.resource}|${c.verb}`));
    const unused = rules
      .flatMap((r) =>
        r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`))),
      )
      .filter((k) => !used.has(k));
    expect(unused).toEqual([]);
  });
});

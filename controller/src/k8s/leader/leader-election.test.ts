import { ApiException, type V1Lease } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeClients } from '../api/clients';
import { LeaseElector } from './leader-election';

/** Just enough of the coordination API for one candidate: a single Lease in memory. */
function leaseApi(): KubeClients {
  let lease: V1Lease | null = null;
  const coordination = {
    readNamespacedLease: () =>
      lease ? Promise.resolve(lease) : Promise.reject(new ApiException(404, 'not found', {}, {})),
    createNamespacedLease: ({ body }: { body: V1Lease }) => Promise.resolve((lease = body)),
    replaceNamespacedLease: ({ body }: { body: V1Lease }) => Promise.resolve((lease = body)),
  };
  return { coordination } as unknown as KubeClients;
}

describe('LeaseElector listeners', () => {
  it('tells every listener about leadership even when one throws, and reports the throw', async () => {
    const errors: unknown[] = [];
    const elector = new LeaseElector({
      clients: leaseApi(),
      namespace: 'ns',
      leaseName: 'lease',
      identity: 'me',
      retryPeriodMs: 10_000,
      onError: (err) => errors.push(err),
    });
    const seen: boolean[] = [];
    elector.onChange(() => {
      throw new Error('listener bug');
    });
    elector.onChange((l) => seen.push(l));
    elector.start();
    await new Promise((r) => setTimeout(r, 20));
    expect(elector.isLeader()).toBe(true);
    expect(seen).toEqual([true]);
    expect(errors).toEqual([new Error('listener bug')]);
    await elector.stop();
    expect(seen).toEqual([true, false]);
  });
});

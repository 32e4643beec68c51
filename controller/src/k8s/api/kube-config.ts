/** Building a `KubeConfig`: in-cluster / default loading for production, a fixed URL for tests. */
import { KubeConfig } from '@kubernetes/client-node';

/** In the cluster: the service account; elsewhere `$KUBECONFIG` / `~/.kube/config`. */
export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/**
 * A config that talks to `server` with a bearer token. An `http://` server needs
 * `skipTLSVerify: true` in client-node 1.x (the API test double speaks plain HTTP).
 */
export function kubeConfigFor(server: string, token = 'test-token'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: server.startsWith('http://') }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u', namespace: 'default' }],
    currentContext: 'ctx',
  });
  return kc;
}

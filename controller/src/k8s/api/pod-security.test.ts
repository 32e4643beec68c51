import type { V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { admissionProblem } from './job-admission';
import { parseSpec } from './optimus-job';
import { podSecurityPolicy, podTemplateViolations, type PodSecurityCheck } from './pod-security';
import { minimalJobSpec } from '../testing';

const policy = (allow: string[] = []) =>
  podSecurityPolicy({
    allow,
    sidecarCredentialsSecret: 'optimus-broker-sidecar',
    jobSecretName: (job) => `${job}-optimus-broker`,
    jobSecretSuffix: '-optimus-broker',
  });
const base: V1PodSpec = { containers: [{ name: 'train', image: 'pytorch' }] };
const check = (spec: Partial<V1PodSpec>, allow: string[] = [], annotations: Record<string, string> = {}) =>
  podTemplateViolations(
    { metadata: { annotations }, spec: { ...base, ...spec } },
    'spec.replicaSpecs.Worker.template',
    {
      namespace: 'ml',
      job: 'resnet',
      policy: policy(allow),
    },
  );
const withContainer = (c: Partial<V1PodSpec['containers'][number]>): Partial<V1PodSpec> => ({
  containers: [{ name: 'train', image: 'pytorch', ...c }],
});

describe('pod templates against the Pod Security baseline and the controller’s own rules', () => {
  it.each<[string, Partial<V1PodSpec>, PodSecurityCheck, string]>([
    [
      'privileged',
      withContainer({ securityContext: { privileged: true } }),
      'privileged',
      'spec.containers[0].securityContext.privileged',
    ],
    [
      'an added capability',
      withContainer({ securityContext: { capabilities: { add: ['NET_BIND_SERVICE', 'SYS_ADMIN'] } } }),
      'capabilities',
      'spec.containers[0].securityContext.capabilities.add[1]',
    ],
    ['hostNetwork', { hostNetwork: true }, 'hostNamespaces', 'spec.hostNetwork'],
    ['hostPID', { hostPID: true }, 'hostNamespaces', 'spec.hostPID'],
    ['hostIPC', { hostIPC: true }, 'hostNamespaces', 'spec.hostIPC'],
    [
      'a hostPath of /',
      { volumes: [{ name: 'root', hostPath: { path: '/' } }] },
      'hostPathVolumes',
      'spec.volumes[0].hostPath',
    ],
    [
      'a host port',
      withContainer({ ports: [{ containerPort: 80, hostPort: 80 }] }),
      'hostPorts',
      'spec.containers[0].ports[0].hostPort',
    ],
    [
      'an unconfined seccomp profile',
      { securityContext: { seccompProfile: { type: 'Unconfined' } } },
      'seccomp',
      'spec.securityContext.seccompProfile.type',
    ],
    [
      'an unsafe sysctl',
      { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } },
      'sysctls',
      'spec.securityContext.sysctls[0].name',
    ],
    [
      'procMount Unmasked',
      withContainer({ securityContext: { procMount: 'Unmasked' } }),
      'procMount',
      'spec.containers[0].securityContext.procMount',
    ],
    [
      'an SELinux user',
      withContainer({ securityContext: { seLinuxOptions: { user: 'system_u' } } }),
      'seLinux',
      'spec.containers[0].securityContext.seLinuxOptions',
    ],
    [
      'a privileged init container',
      { initContainers: [{ name: 'i', image: 'x', securityContext: { privileged: true } }] },
      'privileged',
      'spec.initContainers[0].securityContext.privileged',
    ],
    ['another service account', { serviceAccountName: 'admin' }, 'serviceAccount', 'spec.serviceAccountName'],
    [
      'its token mounted',
      { automountServiceAccountToken: true },
      'serviceAccountToken',
      'spec.automountServiceAccountToken',
    ],
    [
      'the sidecar credentials Secret',
      { volumes: [{ name: 's', secret: { secretName: 'optimus-broker-sidecar' } }] },
      'controllerSecrets',
      'spec.volumes[0].secret.secretName',
    ],
    [
      'another job’s broker Secret',
      withContainer({
        env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'other-optimus-broker', key: 'password' } } }],
      }),
      'controllerSecrets',
      'spec.containers[0].env[0].valueFrom.secretKeyRef.name',
    ],
    [
      'a Secret through a projected volume',
      { volumes: [{ name: 'p', projected: { sources: [{ secret: { name: 'optimus-broker-sidecar' } }] } }] },
      'controllerSecrets',
      'spec.volumes[0].projected.sources[0].secret.name',
    ],
  ])('refuses %s, naming the field', (_name, spec, expected, field) => {
    const v = check(spec);
    expect(v.map((x) => x.check)).toContain(expected);
    expect(v.map((x) => x.field)).toContain(`spec.replicaSpecs.Worker.template.${field}`);
  });

  it('refuses an unconfined AppArmor annotation', () => {
    const v = check({}, [], { 'container.apparmor.security.beta.kubernetes.io/train': 'unconfined' });
    expect(v.map((x) => x.check)).toEqual(['appArmor']);
  });

  it.each<[string, Partial<V1PodSpec>]>([
    ['a plain pod', {}],
    [
      'the default service account, no token',
      { serviceAccountName: 'default', automountServiceAccountToken: false },
    ],
    [
      'baseline capabilities and RuntimeDefault seccomp',
      withContainer({
        securityContext: {
          capabilities: { add: ['CHOWN'], drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
      }),
    ],
    [
      'its own data Secret and its own broker Secret',
      {
        volumes: [
          { name: 'd', secret: { secretName: 'dataset-creds' } },
          { name: 'b', secret: { secretName: 'resnet-optimus-broker' } },
        ],
      },
    ],
    [
      'an emptyDir for /dev/shm and a PVC',
      {
        volumes: [
          { name: 'shm', emptyDir: { medium: 'Memory' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'ckpt' } },
        ],
      },
    ],
    [
      'a safe sysctl',
      { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_keepalive_time', value: '60' }] } },
    ],
  ])('lets %s through', (_name, spec) => {
    expect(check(spec)).toEqual([]);
  });

  it('allows what the admin allows: everywhere, or in one namespace', () => {
    const host = { hostNetwork: true };
    expect(check(host, ['hostNamespaces'])).toEqual([]);
    expect(check(host, ['ml:hostNamespaces'])).toEqual([]);
    expect(check(host, ['research:hostNamespaces']).map((v) => v.check)).toEqual(['hostNamespaces']);
  });

  it('refuses an allow-list entry that names no check', () => {
    expect(() => policy(['hostNetwork'])).toThrow(/unknown pod security check 'hostNetwork'/);
  });
});

describe('job admission', () => {
  const parsed = parseSpec(minimalJobSpec);
  if (!parsed.ok) throw new Error(parsed.error);
  const rules = { controllerNamespace: 'optimus-system', policy: policy() };

  it('refuses a job in the controller’s own namespace', () => {
    expect(admissionProblem({ namespace: 'optimus-system', name: 'x' }, parsed.spec, rules)?.reason).toBe(
      'ControllerNamespace',
    );
  });

  it('admits a plain job elsewhere, and names every offending field of one that is not', () => {
    expect(admissionProblem({ namespace: 'ml', name: 'x' }, parsed.spec, rules)).toBeNull();
    const bad = structuredClone(parsed.spec) as typeof parsed.spec & {
      replicaSpecs: { PS: { template: { spec: Record<string, unknown> } } };
    };
    bad.replicaSpecs.PS.template.spec['hostPID'] = true;
    const p = admissionProblem({ namespace: 'ml', name: 'x' }, bad, rules);
    expect(p?.reason).toBe('PodSecurity');
    expect(p?.error).toContain('spec.replicaSpecs.PS.template.spec.hostPID');
  });
});

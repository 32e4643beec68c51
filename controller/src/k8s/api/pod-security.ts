/**
 * What the controller will not build for whoever may create an OptimusJob (issue 28). The controller
 * creates the pods itself, so a user allowed to create jobs but not pods must not get, through it,
 * a pod the cluster would refuse them: every check of the Pod Security Standards' *baseline* profile
 * (Kubernetes 1.30, `pod-security.kubernetes.io`), plus the ones a controller acting for others needs
 * — another service account, its token mounted, a Secret the controller owns. A check may be allowed
 * by the cluster admin (the chart's `podSecurity.allow`), everywhere or in one namespace. Pure.
 */
import type { V1Container, V1PodSpec, V1SecurityContext, V1Volume } from '@kubernetes/client-node';

export const POD_SECURITY_CHECKS = [
  // Baseline (the Pod Security Standards' names).
  'hostProcess',
  'hostNamespaces',
  'privileged',
  'capabilities',
  'hostPathVolumes',
  'hostPorts',
  'appArmor',
  'seLinux',
  'procMount',
  'seccomp',
  'sysctls',
  // The controller's own: it creates the pods, so it must not lend its rights.
  'serviceAccount',
  'serviceAccountToken',
  'controllerSecrets',
] as const;
export type PodSecurityCheck = (typeof POD_SECURITY_CHECKS)[number];

export interface PodSecurityViolation {
  readonly check: PodSecurityCheck;
  /** The offending field, in the job's own terms (`spec.replicaSpecs.Worker.template.spec…`). */
  readonly field: string;
  readonly message: string;
}

export interface PodSecurityPolicy {
  /** Checks allowed everywhere, and per namespace (`namespace:check` in the configuration). */
  readonly allowed: (check: PodSecurityCheck, namespace: string) => boolean;
  /** Secrets no job may use: the controller's (the sidecar credentials copy, other jobs' own). */
  readonly forbiddenSecret: (name: string, job: string) => boolean;
}

/** Baseline: what may be added beyond the runtime's defaults. */
const ALLOWED_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const SELINUX_TYPES = new Set([
  '',
  'container_t',
  'container_init_t',
  'container_kvm_t',
  'container_engine_t',
]);
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';

type Found = Omit<PodSecurityViolation, 'field'> & { readonly at: string };

/** Every violation of one pod template (`at` is its path in the job). */
export function podTemplateViolations(
  template: {
    readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> | undefined } | undefined;
    readonly spec: V1PodSpec;
  },
  at: string,
  ctx: { readonly namespace: string; readonly job: string; readonly policy: PodSecurityPolicy },
): PodSecurityViolation[] {
  const found: Found[] = [
    ...podLevel(template.spec),
    ...containerLevel(template.spec),
    ...volumes(template.spec.volumes ?? [], ctx),
    ...secretRefs(template.spec, ctx),
    ...appArmorAnnotations(template.metadata?.annotations ?? {}),
  ];
  return found
    .filter((f) => !ctx.policy.allowed(f.check, ctx.namespace))
    .map((f) => ({ check: f.check, field: `${at}.${f.at}`, message: f.message }));
}

function podLevel(spec: V1PodSpec): Found[] {
  const out: Found[] = [];
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
    if (spec[k] === true)
      out.push({ check: 'hostNamespaces', at: `spec.${k}`, message: `${k} shares the node's namespace` });
  const sc = spec.securityContext;
  if (sc?.windowsOptions?.hostProcess === true)
    out.push({
      check: 'hostProcess',
      at: 'spec.securityContext.windowsOptions.hostProcess',
      message: 'a host process',
    });
  out.push(...seccompAndSelinux(sc, 'spec.securityContext'));
  for (const [i, s] of (sc?.sysctls ?? []).entries())
    if (!SAFE_SYSCTLS.has(s.name))
      out.push({
        check: 'sysctls',
        at: `spec.securityContext.sysctls[${i}].name`,
        message: `unsafe sysctl ${s.name}`,
      });
  if (spec.serviceAccountName !== undefined && spec.serviceAccountName !== 'default')
    out.push({
      check: 'serviceAccount',
      at: 'spec.serviceAccountName',
      message: `runs as service account ${spec.serviceAccountName}, not the namespace's default`,
    });
  const legacy = (spec as { serviceAccount?: string }).serviceAccount;
  if (legacy !== undefined && legacy !== 'default')
    out.push({
      check: 'serviceAccount',
      at: 'spec.serviceAccount',
      message: `runs as service account ${legacy}`,
    });
  if (spec.automountServiceAccountToken === true)
    out.push({
      check: 'serviceAccountToken',
      at: 'spec.automountServiceAccountToken',
      message: 'mounts an API token into training pods',
    });
  return out;
}

function containerLevel(spec: V1PodSpec): Found[] {
  const out: Found[] = [];
  const lists: [string, readonly V1Container[]][] = [
    ['containers', spec.containers],
    ['initContainers', spec.initContainers ?? []],
    ['ephemeralContainers', (spec.ephemeralContainers ?? [])],
  ];
  for (const [list, containers] of lists)
    for (const [i, c] of containers.entries()) {
      const at = `spec.${list}[${i}]`;
      const sc = c.securityContext;
      if (sc?.privileged === true)
        out.push({
          check: 'privileged',
          at: `${at}.securityContext.privileged`,
          message: 'a privileged container',
        });
      for (const [j, cap] of (sc?.capabilities?.add ?? []).entries())
        if (!ALLOWED_CAPABILITIES.has(cap.replace(/^CAP_/, '')))
          out.push({
            check: 'capabilities',
            at: `${at}.securityContext.capabilities.add[${j}]`,
            message: `adds capability ${cap}`,
          });
      if (sc?.procMount !== undefined && sc.procMount !== 'Default')
        out.push({
          check: 'procMount',
          at: `${at}.securityContext.procMount`,
          message: `procMount ${sc.procMount}`,
        });
      if (sc?.windowsOptions?.hostProcess === true)
        out.push({
          check: 'hostProcess',
          at: `${at}.securityContext.windowsOptions.hostProcess`,
          message: 'a host process',
        });
      out.push(...seccompAndSelinux(sc, `${at}.securityContext`));
      for (const [j, p] of (c.ports ?? []).entries())
        if ((p.hostPort ?? 0) !== 0)
          out.push({
            check: 'hostPorts',
            at: `${at}.ports[${j}].hostPort`,
            message: `binds host port ${p.hostPort}`,
          });
    }
  return out;
}

function seccompAndSelinux(
  sc: Pick<V1SecurityContext, 'seccompProfile' | 'seLinuxOptions' | 'appArmorProfile'> | undefined,
  at: string,
): Found[] {
  const out: Found[] = [];
  if (sc?.seccompProfile?.type === 'Unconfined')
    out.push({ check: 'seccomp', at: `${at}.seccompProfile.type`, message: 'an unconfined seccomp profile' });
  if (sc?.appArmorProfile?.type === 'Unconfined')
    out.push({
      check: 'appArmor',
      at: `${at}.appArmorProfile.type`,
      message: 'an unconfined AppArmor profile',
    });
  const se = sc?.seLinuxOptions;
  if (se && (!SELINUX_TYPES.has(se.type ?? '') || (se.user ?? '') !== '' || (se.role ?? '') !== ''))
    out.push({ check: 'seLinux', at: `${at}.seLinuxOptions`, message: 'custom SELinux options' });
  return out;
}

function appArmorAnnotations(annotations: Readonly<Record<string, string>>): Found[] {
  return Object.entries(annotations)
    .filter(
      ([k, v]) => k.startsWith(APPARMOR_ANNOTATION) && v !== 'runtime/default' && !v.startsWith('localhost/'),
    )
    .map(([k, v]) => ({
      check: 'appArmor' as const,
      at: `metadata.annotations["${k}"]`,
      message: `AppArmor ${v}`,
    }));
}

function volumes(list: readonly V1Volume[], ctx: { job: string; policy: PodSecurityPolicy }): Found[] {
  const out: Found[] = [];
  for (const [i, v] of list.entries()) {
    if (v.hostPath)
      out.push({
        check: 'hostPathVolumes',
        at: `spec.volumes[${i}].hostPath`,
        message: `mounts the node's ${v.hostPath.path}`,
      });
    const names = [
      ...(v.secret?.secretName
        ? [[`spec.volumes[${i}].secret.secretName`, v.secret.secretName] as const]
        : []),
      ...(v.projected?.sources ?? []).flatMap((s, j) =>
        s.secret?.name
          ? [[`spec.volumes[${i}].projected.sources[${j}].secret.name`, s.secret.name] as const]
          : [],
      ),
    ];
    for (const [at, name] of names)
      if (ctx.policy.forbiddenSecret(name, ctx.job))
        out.push({
          check: 'controllerSecrets',
          at,
          message: `uses the Secret ${name}, which the controller owns`,
        });
  }
  return out;
}

function secretRefs(spec: V1PodSpec, ctx: { job: string; policy: PodSecurityPolicy }): Found[] {
  const out: Found[] = [];
  const lists: [string, readonly V1Container[]][] = [
    ['containers', spec.containers],
    ['initContainers', spec.initContainers ?? []],
  ];
  for (const [list, containers] of lists)
    for (const [i, c] of containers.entries()) {
      const refs = [
        ...(c.env ?? []).flatMap((e, j) =>
          e.valueFrom?.secretKeyRef?.name
            ? [[`env[${j}].valueFrom.secretKeyRef.name`, e.valueFrom.secretKeyRef.name] as const]
            : [],
        ),
        ...(c.envFrom ?? []).flatMap((e, j) =>
          e.secretRef?.name ? [[`envFrom[${j}].secretRef.name`, e.secretRef.name] as const] : [],
        ),
      ];
      for (const [at, name] of refs)
        if (ctx.policy.forbiddenSecret(name, ctx.job))
          out.push({
            check: 'controllerSecrets',
            at: `spec.${list}[${i}].${at}`,
            message: `uses the Secret ${name}, which the controller owns`,
          });
    }
  return out;
}

/**
 * The policy from the configuration: `allow` lists checks (`privileged`) or namespaced checks
 * (`ml:hostNamespaces`); the controller's Secrets are the sidecar credentials copy and every job's
 * broker Secret but the job's own. Unknown names in `allow` are an error (a typo must not read as
 * "nothing allowed" nor as "everything").
 */
export function podSecurityPolicy(o: {
  readonly allow: readonly string[];
  readonly sidecarCredentialsSecret?: string | undefined;
  readonly jobSecretName: (job: string) => string;
  readonly jobSecretSuffix: string;
}): PodSecurityPolicy {
  const everywhere = new Set<string>();
  const inNamespace = new Set<string>();
  for (const raw of o.allow) {
    const entry = raw.trim();
    if (entry === '') continue;
    const check = entry.includes(':') ? entry.slice(entry.indexOf(':') + 1) : entry;
    if (!(POD_SECURITY_CHECKS as readonly string[]).includes(check))
      throw new Error(`unknown pod security check '${check}' (known: ${POD_SECURITY_CHECKS.join(', ')})`);
    (entry.includes(':') ? inNamespace : everywhere).add(entry);
  }
  return {
    allowed: (check, namespace) => everywhere.has(check) || inNamespace.has(`${namespace}:${check}`),
    forbiddenSecret: (name, job) =>
      name === o.sidecarCredentialsSecret ||
      (name.endsWith(o.jobSecretSuffix) && name !== o.jobSecretName(job)),
  };
}

/**
 * Where this controller runs jobs (issue 28): the namespaces named, and those carrying the selector's
 * labels; with neither, every namespace (a controller granted cluster-wide writes). Its rights to
 * create pods and Secrets are granted only there (the chart binds its job-writer role in exactly
 * these namespaces), so a job elsewhere is told why it does not run instead of failing on a 403.
 * Never the controller's own namespace: its Secrets live there.
 */
export interface NamespaceScope {
  /** True when jobs of `namespace` are this controller's to run. */
  includes(namespace: string): boolean;
  /** Why a job of `namespace` does not run (null when it is in scope): what the admin can do. */
  whyNot(namespace: string): string | null;
}

export function namespaceScope(o: {
  readonly named: readonly string[];
  readonly selector: string | undefined;
  /** Namespaces the selector matches now (from an informer); null without a selector. */
  readonly selected: () => ReadonlySet<string> | null;
}): NamespaceScope {
  const everywhere = o.named.length === 0 && o.selector === undefined;
  const includes = (ns: string): boolean =>
    everywhere || o.named.includes(ns) || (o.selected()?.has(ns) ?? false);
  return {
    includes,
    whyNot: (ns) => {
      if (includes(ns)) return null;
      const how = o.selector
        ? `label it (kubectl label namespace ${ns} ${o.selector.replaceAll(',', ' ')}) and run helm upgrade, which grants the controller its rights there`
        : `add it to the chart's jobNamespaces.names and run helm upgrade`;
      return `namespace ${ns} is not enabled for Optimus jobs: ${how}`;
    },
  };
}

// Health of the sidecar as a set of named components (backend, config, sigterm); HTTP and gRPC health read it.

export type HealthComponent = 'backend' | 'config' | 'sigterm';

export interface HealthOptions {
  /** The backend component starts unhealthy until the backend reports (Redis); memory and memcache start healthy. */
  readonly backendStartsHealthy: boolean;
  /** HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: adds the `config` component, initially unhealthy. */
  readonly requireConfig: boolean;
}

export interface Health {
  /** True when every enabled component is healthy. */
  isHealthy(): boolean;
  /** Marks a component; a component that is not enabled (config without requireConfig) is ignored. */
  set(component: HealthComponent, healthy: boolean): void;
  /** Called after every change of the overall state; returns an unsubscribe function. */
  onChange(listener: (healthy: boolean) => void): () => void;
  /** Current state of each enabled component, for logs and tests. */
  components(): Readonly<Record<string, boolean>>;
}

export function createHealth(options: HealthOptions): Health {
  const state = new Map<HealthComponent, boolean>();
  state.set('backend', options.backendStartsHealthy);
  if (options.requireConfig) state.set('config', false);
  state.set('sigterm', true);
  const listeners = new Set<(healthy: boolean) => void>();
  const compute = (): boolean => {
    for (const ok of state.values()) if (!ok) return false;
    return true;
  };
  let overall = compute();
  return {
    isHealthy: () => overall,
    set(component, healthy) {
      if (!state.has(component)) return;
      state.set(component, healthy);
      const next = compute();
      if (next === overall) return;
      overall = next;
      for (const l of listeners) l(next);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    components: () => Object.fromEntries(state),
  };
}

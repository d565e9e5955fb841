import type { DashboardAction } from '../../src/nest/admin/index.js';
import { UPSTREAM_MODES, UPSTREAM_NAMES } from './upstream-mode.model.js';

/**
 * The dashboard's buttons for the upstreams: one box per upstream with a button per mode, showing the
 * current one as pressed. `prefix` is the app's global prefix, if any (`/api`).
 */
export function upstreamDashboardActions(prefix = ''): DashboardAction[] {
  return UPSTREAM_NAMES.flatMap((name) =>
    UPSTREAM_MODES.map((mode) => ({
      group: `${name} upstream`,
      label: mode[0].toUpperCase() + mode.slice(1),
      method: 'PUT' as const,
      url: `${prefix}/upstreams/${name}/mode`,
      body: { mode },
      stateUrl: `${prefix}/upstreams/${name}`,
      activeWhen: { mode },
    })),
  );
}

import { ERR } from '../../errors.ts';
import { presentsAdminKey } from '../../auth/admin-key.ts';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.ts';
import type { GatewayMiddleware } from '../state.ts';

/**
 * GET /metrics in Prometheus' text format (issue #16). `server.metrics: admin` (the default) asks
 * for the admin key, as /admin/* does, and without an admin key configured there is no way in:
 * a 403 says which setting opens it. `public` serves anybody (a scraper on a private network).
 */
export function createMetricsRoute(metrics: GatewayMetrics, access: 'public' | 'admin', adminKeySha256: string | null): GatewayMiddleware {
  const adminDigest = adminKeySha256 === null ? null : Buffer.from(adminKeySha256, 'hex');
  return async (ctx) => {
    if (access === 'admin') {
      if (adminDigest === null) throw ERR.metricsClosed();
      if (!presentsAdminKey(ctx, adminDigest)) throw ERR.invalidKey();
    }
    ctx.set('content-type', metrics.registry.contentType);
    ctx.body = await metrics.scrape();
  };
}

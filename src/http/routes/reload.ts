import Router from '@koa/router';
import { presentsAdminKey } from '../../auth/admin-key.ts';
import { ERR } from '../../errors.ts';
import type { ReloadResult } from '../../reload/reloader.ts';
import type { GatewayState } from '../state.ts';

/**
 * POST /admin/reload (issue #16): re-reads the YAML file, as SIGHUP does. 200 with what changed and
 * the settings that wait for a restart; 400 naming every problem, each with its YAML path, when the
 * file cannot be used, and then nothing changed.
 */
export function createReloadRouter(reload: () => Promise<ReloadResult>, adminKeySha256: string): Router<GatewayState> {
  const adminDigest = Buffer.from(adminKeySha256, 'hex');
  const router = new Router<GatewayState>();
  router.post('/admin/reload', async (ctx) => {
    if (!presentsAdminKey(ctx, adminDigest)) throw ERR.invalidKey();
    const result = await reload();
    if (!result.ok) {
      const err = ERR.configNotReloaded(result.problems);
      ctx.status = err.status;
      ctx.body = { error: { message: err.message, type: err.type, param: null, code: err.chatCode, problems: result.problems } };
      return;
    }
    const { providers, models, restartRequired } = result.changes;
    ctx.body = { reloaded: true, providers, models, restart_required: restartRequired };
  });
  return router;
}

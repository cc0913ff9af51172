import type { PluginError, UpstreamResponse } from '../../src/plugin-host/api.ts';
import { obj } from '../shared/json.ts';


/**
 * Vertex's refusals (providers.md §2.2, §3.9): Google-shaped for the platform (auth, quota, a
 * model not enabled), Anthropic-shaped from Claude itself. A 401 is the gateway's credentials;
 * a 403 or 404 (the API or the model not enabled in this project or region) may be served by
 * another route. Google's messages name the operator's project and service account: callers
 * must not learn them.
 */
export function vertexError(response: UpstreamResponse): PluginError {
  const error = obj(obj(response.body)['error']);
  const message = redacted(typeof error['message'] === 'string' ? error['message'] : typeof response.body === 'string' ? response.body.slice(0, 500) : `Vertex answered ${response.status}`);
  if (response.status === 401) return { status: 502, message, credentials: true };
  const type = typeof error['type'] === 'string' ? error['type'] : undefined;
  const status = response.status === 400 && error['status'] === 'RESOURCE_EXHAUSTED' ? 429 : response.status;
  return { status, message, ...(type && { type }), ...((status === 403 || status === 404) && { failover: true }) };
}

/** Project paths, numbers and service-account emails out of a message. */
export function redacted(message: string): string {
  return message
    .replace(/projects\/[^/\s'"]+/g, 'projects/…')
    .replace(/[\w.+-]+@[\w-]+\.iam\.gserviceaccount\.com/g, '…@….iam.gserviceaccount.com')
    .replace(/\b(project|consumer)\s+['"]?[\w-]+['"]?/gi, '$1 …');
}

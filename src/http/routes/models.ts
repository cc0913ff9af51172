import type { Catalogue } from '../../catalogue/catalogue.ts';
import { listModels, modelEntry, type ModelListQuery } from '../../catalogue/model-list.ts';
import { ERR } from '../../errors.ts';
import { decodeSegment } from '../path-segment.ts';
import type { GatewayMiddleware } from '../state.ts';

/** GET /v1/models: the models the calling key may use. */
export function createListModels(catalogue: Catalogue): GatewayMiddleware {
  return async (ctx) => {
    ctx.body = listModels(catalogue, ctx.state.key?.allowsModel ?? null, parseQuery(ctx.query));
  };
}

/** GET /v1/models/:id, for `models.retrieve()` in both SDKs. */
export function createGetModel(catalogue: Catalogue): GatewayMiddleware {
  return async (ctx) => {
    const raw = ctx.path.slice('/v1/models/'.length);
    const id = decodeSegment(raw) ?? raw; // not valid percent-encoding: no model has that id
    const entry = catalogue.get(id);
    const allows = ctx.state.key?.allowsModel;
    if (!entry || (allows && !allows(id))) throw ERR.modelNotFound(id);
    ctx.body = modelEntry(entry);
  };
}

function parseQuery(query: Record<string, string | string[] | undefined>): ModelListQuery {
  const single = (name: string): string | undefined => {
    const value = query[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const limitText = single('limit');
  let limit: number | undefined;
  if (limitText !== undefined) {
    limit = Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw ERR.invalidField('limit: must be an integer from 1 to 1000', 'limit');
    }
  }
  const afterId = single('after_id');
  const beforeId = single('before_id');
  const list = (name: string): string[] | undefined => single(name)?.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const parameters = list('supported_parameters');
  const outputModalities = list('output_modalities');
  return {
    ...(limit !== undefined && { limit }),
    ...(afterId && { afterId }),
    ...(beforeId && { beforeId }),
    ...(parameters && { parameters }),
    ...(outputModalities && { outputModalities }),
  };
}

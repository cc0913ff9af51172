import type { Catalogue, CatalogueEntry } from './catalogue.ts';
import { perTokenFromPerMillion } from './decimal.ts';
import type { Pricing } from '../config/types.ts';

/**
 * GET /v1/models in one shape both official SDKs accept: OpenAI's list (`object: "list"`, entries
 * with `object`, `created`, `owned_by`) and Anthropic's page (`has_more`, `first_id`, `last_id`,
 * entries with `type`, `display_name`, `created_at`), plus OpenRouter's `context_length`,
 * `architecture` and per-token `pricing` strings (protocol.md §A.11, §B.8, §C.5).
 */
export interface ModelListQuery {
  readonly limit?: number;
  readonly afterId?: string;
  readonly beforeId?: string;
  /** OpenRouter's filter: only models that support every one of these parameters. */
  readonly parameters?: readonly string[];
  /**
   * OpenRouter's `output_modalities` filter: models with any of these output modalities (issue #13).
   * Absent or `all`: every model. OpenRouter lists only text models by default; a gateway's own
   * catalogue is small and its clients pick from all of it, so Junction lists everything.
   */
  readonly outputModalities?: readonly string[];
}

export function modelEntry(entry: CatalogueEntry): Record<string, unknown> {
  const { model } = entry;
  const price = model.pricing;
  return {
    id: model.id,
    object: 'model',
    type: 'model',
    display_name: model.name,
    created: Math.floor(model.created.getTime() / 1000),
    created_at: model.created.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    owned_by: entry.routes[0]?.provider.config.id ?? 'junction',
    context_length: model.contextLength,
    max_output_tokens: model.maxOutputTokens,
    architecture: {
      modality: `${model.inputModalities.join('+')}->${model.outputModalities.join('+')}`,
      input_modalities: model.inputModalities,
      output_modalities: model.outputModalities,
    },
    pricing: {
      prompt: perTokenFromPerMillion(price.input),
      completion: perTokenFromPerMillion(price.output),
      input_cache_read: perTokenFromPerMillion(price.cacheRead ?? price.input),
      input_cache_write: perTokenFromPerMillion(price.cacheWrite ?? price.input),
      internal_reasoning: perTokenFromPerMillion(price.reasoning ?? price.output),
      request: String(price.request ?? 0),
      ...mediaPricing(price),
    },
    supported_parameters: entry.parameters,
  };
}

/** The page of models a key may see. Without `limit` every model is returned (OpenAI's list has no pages). */
export function listModels(
  catalogue: Catalogue,
  allows: ((id: string) => boolean) | null,
  query: ModelListQuery,
): Record<string, unknown> {
  const wanted = query.parameters ?? [];
  const outputs = query.outputModalities?.includes('all') === true ? undefined : query.outputModalities;
  const visible = [...catalogue.entries()].filter(
    (e) =>
      (allows === null || allows(e.model.id)) &&
      wanted.every((p) => e.parameters.includes(p)) &&
      (outputs === undefined || outputs.some((m) => e.model.outputModalities.includes(m))),
  );
  let start = 0;
  let end = visible.length;
  if (query.afterId !== undefined) {
    const after = visible.findIndex((e) => e.model.id === query.afterId);
    start = after === -1 ? visible.length : after + 1;
  }
  if (query.beforeId !== undefined) {
    const before = visible.findIndex((e) => e.model.id === query.beforeId);
    end = before === -1 ? visible.length : before;
    if (query.limit !== undefined) start = Math.max(start, end - query.limit);
  }
  if (query.limit !== undefined && query.beforeId === undefined) end = Math.min(end, start + query.limit);
  const page = visible.slice(start, end);
  const data = page.map(modelEntry);
  return {
    object: 'list',
    data,
    has_more: query.beforeId === undefined ? end < visible.length : start > 0,
    first_id: page[0]?.model.id ?? null,
    last_id: page.at(-1)?.model.id ?? null,
  };
}

/**
 * Media prices (issue #13), only where the model has them: audio tokens per token under OpenRouter's
 * names (`audio`, `audio_output`), image tokens per token, and USD per image generated, `image_output` (OpenRouter's name) being the one
 * price or the dearest of the table, which is shown as written in `image_output_by_size`.
 */
function mediaPricing(price: Pricing): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (price.inputAudio !== null) out['audio'] = perTokenFromPerMillion(price.inputAudio);
  if (price.outputAudio !== null) out['audio_output'] = perTokenFromPerMillion(price.outputAudio);
  if (price.inputImage !== null) out['input_image_token'] = perTokenFromPerMillion(price.inputImage);
  if (price.outputImage !== null) out['output_image_token'] = perTokenFromPerMillion(price.outputImage);
  // Speech per character, transcription per minute of audio (issue #13): units OpenRouter has no name for.
  if (price.characters !== null) out['character'] = perTokenFromPerMillion(price.characters);
  if (price.audioMinute !== null) out['audio_minute'] = String(price.audioMinute);
  if (typeof price.image === 'number') out['image_output'] = String(price.image);
  else if (price.image !== null) {
    out['image_output'] = String(Math.max(...Object.values(price.image)));
    out['image_output_by_size'] = Object.fromEntries(Object.entries(price.image).map(([k, v]) => [k, String(v)]));
  }
  return out;
}

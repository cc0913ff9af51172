import type { ModelConfig } from '../config/types.ts';
import { PATH_OF, TEXT_ENDPOINTS, type Endpoint } from '../formats/wire.ts';

/**
 * The endpoints a model serves, decided by its output modalities (issue #13): `text` serves
 * Messages, count_tokens and Chat Completions; `embeddings` serves /v1/embeddings; `image` serves
 * /v1/images/generations (and Chat, with `text` beside it), and /v1/images/edits when the model
 * also reads images; a model that reads only audio and writes text is a transcription model,
 * serving /v1/audio/transcriptions and /v1/audio/translations, not chat. A request on
 * any other endpoint is refused before routing, naming the endpoints the model does serve.
 */
export function endpointsOf(model: ModelConfig): ReadonlySet<Endpoint> {
  const endpoints = new Set<Endpoint>();
  const transcribes = model.inputModalities.length > 0 && model.inputModalities.every((m) => m === 'audio');
  if (transcribes && model.outputModalities.includes('text')) {
    endpoints.add('audio_transcriptions');
    endpoints.add('audio_translations');
  } else if (model.outputModalities.includes('text')) {
    for (const endpoint of TEXT_ENDPOINTS) endpoints.add(endpoint);
    endpoints.add('responses');
    endpoints.add('responses_input_tokens');
  }
  if (model.outputModalities.includes('embeddings')) endpoints.add('embeddings');
  if (model.outputModalities.includes('image')) endpoints.add('images_generations');
  if (model.outputModalities.includes('image') && model.inputModalities.includes('image')) endpoints.add('images_edits');
  // Audio without text is a speech model; a chat model that also speaks (text and audio) is not.
  if (model.outputModalities.includes('audio') && !model.outputModalities.includes('text')) endpoints.add('audio_speech');
  return endpoints;
}

/** `/v1/embeddings` or `/v1/messages, /v1/messages/count_tokens, /v1/chat/completions`. */
export function pathsOf(endpoints: ReadonlySet<Endpoint>): string {
  return [...endpoints].map((endpoint) => PATH_OF[endpoint]).join(', ');
}

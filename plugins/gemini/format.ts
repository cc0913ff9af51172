import type { CanonicalAnswer, UpstreamFormat } from '../../src/plugin-host/api.ts';
import { decodeGeminiAnswer } from './answer.ts';
import { encodeGeminiRequest } from './request.ts';
import type { SignatureStore } from './signatures.ts';
import { geminiStreamDecoder } from './stream.ts';

/**
 * The `generateContent` format as a plugin format codec: the Gemini API's and Vertex AI's Gemini
 * models speak it alike (providers.md §2.3). The state is the model the request went to: thought
 * signatures are bound to it.
 */
export function geminiFormat(signatures: SignatureStore): UpstreamFormat {
  return {
    encodeRequest: (request, options) => ({ body: encodeGeminiRequest(request, options, signatures), state: options.model }),
    decodeAnswer: (body, state): CanonicalAnswer => {
      const { blocks, stop, usage } = decodeGeminiAnswer(body, signatures, String(state));
      return { id: typeof body['responseId'] === 'string' ? body['responseId'] : undefined, model: typeof body['modelVersion'] === 'string' ? body['modelVersion'] : '', blocks, stop, stopSequence: undefined, usage };
    },
    streamDecoder: (state) => geminiStreamDecoder(signatures, String(state)),
  };
}

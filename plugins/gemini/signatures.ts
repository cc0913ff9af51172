/**
 * Thought signatures (providers.md §3.8): Gemini's reasoning state rides on the parts of its
 * answer, and the next request must carry each back on the same part, or Gemini 3 refuses a
 * function call of the current turn (400 "missing a thought_signature"). Anthropic and OpenAI
 * clients drop fields they do not know, so the signature stays here, keyed by the tool call's id,
 * which every client does send back. Bounded, oldest first out; one gateway process's memory (a
 * continuation on another replica falls back to Google's documented placeholder, which stops the
 * 400 at some cost in quality).
 */
export const SKIP_VALIDATOR = 'skip_thought_signature_validator';

export class SignatureStore {
  readonly #byCall = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 20_000) {
    this.#limit = limit;
  }

  remember(callId: string, signature: string): void {
    this.#byCall.delete(callId);
    this.#byCall.set(callId, signature);
    if (this.#byCall.size > this.#limit) this.#byCall.delete(this.#byCall.keys().next().value as string);
  }

  recall(callId: string): string | undefined {
    return this.#byCall.get(callId);
  }
}

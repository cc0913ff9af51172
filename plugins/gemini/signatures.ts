/**
 * Thought signatures (providers.md §3.8): Gemini's reasoning state rides on the parts of its
 * answer, and the next request must carry each back on the same part, or Gemini 3 refuses a
 * function call of the current turn (400 "missing a thought_signature"). Anthropic and OpenAI
 * clients drop fields they do not know, so the signature stays here, keyed by the tool call's id,
 * which every client does send back, and the model. Bounded, oldest first out; one process's memory:
 * a continuation served by another worker or replica falls back to Google's documented
 * placeholder, which stops the 400 at some cost in quality.
 */
export const SKIP_VALIDATOR = 'skip_thought_signature_validator';

export class SignatureStore {
  readonly #byCall = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 20_000) {
    this.#limit = limit;
  }

  /** Signatures are bound to the model that made them (providers.md §3.8): keyed by both. */
  remember(model: string, callId: string, signature: string): void {
    const key = `${model}\u0000${callId}`;
    this.#byCall.delete(key);
    this.#byCall.set(key, signature);
    if (this.#byCall.size > this.#limit) this.#byCall.delete(this.#byCall.keys().next().value as string);
  }

  recall(model: string, callId: string): string | undefined {
    return this.#byCall.get(`${model}\u0000${callId}`);
  }
}

import type { Json } from '../formats/convert/json.ts';
import { chatRequestText, messagesRequestText } from './request-text.ts';
import { TokenizerThread } from './tokenizer-thread.ts';

/**
 * The one input-token estimator (issue #4): it answers count_tokens where no upstream can count,
 * sizes every hold, and stands in for usage a cut stream never reported. Texts go through a real
 * tokenizer (gpt-tokenizer, o200k_base); images and PDFs count at fixed rates (README,
 * "Input-token estimate").
 *
 * Cost, measured on this machine kind: 0.3 ms for 20 KB, 1.6 ms for 76 KB, about 6 ms for 150 KB.
 * So at most INLINE_LIMIT characters are counted on the event loop per request; the rest go to a
 * worker thread, so no other request's stream stalls. A coding agent resends the same tool schemas,
 * system prompt and earlier messages on every turn (76 KB in the Claude Code fixture), so each long
 * text's count is remembered, per API key: sharing counts across keys would let one key time
 * whether another sent a given text.
 */
const INLINE_LIMIT = 20_000;
/** Texts at least this long are remembered; shorter ones are cheaper to count again. */
const REMEMBER_FROM = 1_000;
/** Characters of remembered text, at most: about 16 MB. */
const REMEMBER_CHARS = 16_000_000;

type CountTokens = (text: string) => number;
let inline: Promise<CountTokens> | undefined;
const thread = new TokenizerThread();
const remembered = new Map<string, number>();
let rememberedChars = 0;

/** The estimate for a request, in tokens. `scope` (the API key) keeps remembered counts apart. */
export async function countInputTokens(format: 'messages' | 'chat', request: Json, scope = ''): Promise<number> {
  const { parts, fixed } = format === 'messages' ? messagesRequestText(request) : chatRequestText(request);
  const short: string[] = [];
  const unknown: { key: string; text: string }[] = [];
  let total = fixed;
  for (const text of parts) {
    if (text.length < REMEMBER_FROM) {
      short.push(text);
      continue;
    }
    const key = `${scope}\u0000${text}`;
    const known = remembered.get(key);
    if (known === undefined) {
      unknown.push({ key, text });
    } else {
      // Least recently used goes first: a read moves the entry to the end.
      remembered.delete(key);
      remembered.set(key, known);
      total += known;
    }
  }
  const texts = [short.join('\n'), ...unknown.map((u) => u.text)];
  const counts = await countTexts(texts);
  total += counts[0] ?? 0;
  unknown.forEach((u, i) => remember(u.key, counts[i + 1] ?? 0));
  for (let i = 1; i < counts.length; i++) total += counts[i] ?? 0;
  return total;
}

/**
 * Loads the tokenizer's tables (about 200 ms) so the first request does not wait for them, and
 * warms the worker thread in the background. Both live as long as the process: the thread is
 * unref'd, so it never keeps the process alive, and gateways started one after another in one
 * process (the tests) share it rather than pay its start-up each time.
 */
export async function loadTokenizer(): Promise<void> {
  thread.warm();
  await inlineCounter();
}

/** How many texts' counts are remembered: for tests. */
export function rememberedCounts(): number {
  return remembered.size;
}

const inlineCounter = (): Promise<CountTokens> => (inline ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => m.countTokens));

async function countTexts(texts: readonly string[]): Promise<number[]> {
  const count = await inlineCounter();
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  if (chars <= INLINE_LIMIT) return texts.map((t) => count(t));
  try {
    return await thread.count(texts);
  } catch {
    // The worker died (a new one starts on the next call): count these inline rather than fail
    // the request; one stall beats a 500.
    return texts.map((t) => count(t));
  }
}

function remember(key: string, tokens: number): void {
  if (remembered.has(key)) return;
  remembered.set(key, tokens);
  rememberedChars += key.length;
  for (const [oldest] of remembered) {
    if (rememberedChars <= REMEMBER_CHARS) break;
    remembered.delete(oldest);
    rememberedChars -= oldest.length;
  }
}

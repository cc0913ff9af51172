import type { Json } from '../formats/convert/json.ts';
import { chatRequestText, embeddingsRequestText, messagesRequestText, responsesRequestText, type RequestText } from './request-text.ts';
import { TokenizerThread } from './tokenizer-thread.ts';

/**
 * The one input-token estimator (issue #4): it answers count_tokens where no upstream can count,
 * sizes every hold, and stands in for usage a cut stream never reported. Texts go through a real
 * tokenizer (gpt-tokenizer, o200k_base); images and PDFs count at fixed rates (docs/money.md,
 * "Input-token estimate").
 *
 * Cost, measured on this machine kind: 0.3 ms for 20 KB, 1.6 ms for 76 KB, about 6 ms for 150 KB.
 * So at most INLINE_LIMIT characters are counted on the event loop per request; the rest go to a
 * worker thread, so no other request's stream stalls. A coding agent resends the same tool schemas,
 * system prompt and earlier messages on every turn (76 KB in the Claude Code fixture), so each
 * text's count (but the shortest) is remembered, per API key: sharing counts across keys would let
 * one key time whether another sent a given text.
 */
const INLINE_LIMIT = 20_000;
/**
 * Texts at least this long are remembered; shorter ones are cheaper to count again. A coding
 * agent's history is hundreds of short blocks (the Claude Code fixture: 558 under 1,000 chars),
 * recounted on every turn when only long texts were remembered (issue #6 profile).
 */
const REMEMBER_FROM = 64;
/** Characters of remembered text, at most: about 16 MB. */
let rememberChars = 16_000_000;

type CountTokens = (text: string) => number;
let inline: Promise<CountTokens> | undefined;
const thread = new TokenizerThread();
/**
 * Remembered counts by scope, then by text. Two levels rather than one `scope + text` key: that
 * key is a new string per text per request, copied and hashed whole on every lookup. Both levels
 * are kept in least-recently-used order (a read moves an entry to the end).
 */
const remembered = new Map<string, Map<string, number>>();
let rememberedChars = 0;
let rememberedTexts = 0;

/**
 * The estimate for a request, in tokens. `scope` (the API key) keeps remembered counts apart.
 * `toolsText`, when given, is the request's `tools` as sent, counted in place of its schemas.
 */
export async function countInputTokens(format: 'messages' | 'chat' | 'responses' | 'embeddings' | 'images' | 'speech', request: Json, scope = '', toolsText?: string): Promise<number> {
  return countRequestText(requestText(format, request, toolsText), scope);
}

/** The estimate for a request's text, already taken apart (usage/request-text.ts). */
export async function countRequestText(text: RequestText, scope = ''): Promise<number> {
  return (await countGroups([text], scope))[0] ?? 0;
}

/**
 * The estimates of several texts, in one pass of the tokenizer: each group's short texts joined
 * and counted together, its long ones one by one (remembered per scope). A checked body counts
 * each of its new elements as a group (usage/checked-text.ts), so the count is the element's own
 * and can be kept with it.
 */
export async function countGroups(groups: readonly RequestText[], scope = ''): Promise<number[]> {
  const known = remembered.get(scope);
  if (known !== undefined) {
    remembered.delete(scope);
    remembered.set(scope, known);
  }
  const totals: number[] = [];
  /** What each text to count adds to: its group's index; a long text is also remembered. */
  const texts: string[] = [];
  const owners: number[] = [];
  const longs: boolean[] = [];
  for (let g = 0; g < groups.length; g++) {
    const { parts, fixed } = groups[g] as RequestText;
    let total = fixed;
    let short: string[] | undefined;
    for (const text of parts) {
      if (text.length < REMEMBER_FROM) {
        (short ??= []).push(text);
        continue;
      }
      const count = known?.get(text);
      if (count === undefined) {
        texts.push(text);
        owners.push(g);
        longs.push(true);
      } else {
        known?.delete(text);
        known?.set(text, count);
        total += count;
      }
    }
    if (short !== undefined) {
      texts.push(short.join('\n'));
      owners.push(g);
      longs.push(false);
    }
    totals.push(total);
  }
  if (texts.length === 0) return totals;
  const counts = await countTexts(texts);
  for (let i = 0; i < texts.length; i++) {
    const count = counts[i] ?? 0;
    const owner = owners[i] as number;
    totals[owner] = (totals[owner] as number) + count;
    if (longs[i] === true) remember(scope, texts[i] as string, count);
  }
  return totals;
}

/**
 * Loads the tokenizer's tables (about 200 ms) so the first request does not wait for them. The
 * worker thread is not started here: it costs about 0.8 s of CPU, and a gateway that never sees a
 * long request never needs it (issue #12: every process a test or `--workers` starts paid for it).
 * The first long request starts it and is counted on the event loop meanwhile (countTexts).
 */
export async function loadTokenizer(): Promise<void> {
  await inlineCounter();
}

/** Starts the worker thread and resolves once it counts (tests, to measure it warm). */
export function warmTokenizerThread(): Promise<void> {
  return thread.warm();
}

/** Whether the worker thread runs yet, and has loaded the tokenizer: for tests. */
export function tokenizerThreadState(): 'not started' | 'starting' | 'ready' {
  return thread.ready ? 'ready' : thread.started ? 'starting' : 'not started';
}

/** How many texts' counts are remembered, and how many characters they hold: for tests. */
export function rememberedCounts(): number {
  return rememberedTexts;
}
export function rememberedSize(): { texts: number; chars: number; scopes: string[] } {
  return { texts: rememberedTexts, chars: rememberedChars, scopes: [...remembered.keys()] };
}

/** Sets the most characters remembered (tests); returns the previous bound. */
export function limitRemembered(chars: number): number {
  const previous = rememberChars;
  rememberChars = chars;
  return previous;
}

/**
 * A request's text is text, whatever it holds: `<|endoftext|>` in a prompt (a question about
 * tokenizers, say) is counted as the characters it is, as the providers read it. gpt-tokenizer's
 * default refuses such text with a throw, which failed the request with a 500.
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const inlineCounter = (): Promise<CountTokens> =>
  (inline ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => (text: string) => m.countTokens(text, AS_TEXT)));

/** Texts given to the tokenizer so far (tests: what is remembered is not counted again). */
let tokenized = 0;
export function tokenizedTexts(): number {
  return tokenized;
}

async function countTexts(texts: readonly string[]): Promise<number[]> {
  tokenized += texts.length;
  const count = await inlineCounter();
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  if (chars <= INLINE_LIMIT) return texts.map((t) => count(t));
  if (!thread.ready) {
    // The thread starts with the first long request; until it has loaded (under a second), long
    // texts are counted here: a few milliseconds each, rather than a wait for the thread.
    void thread.warm();
    return texts.map((t) => count(t));
  }
  try {
    return await thread.count(texts);
  } catch {
    // The worker died (a new one starts on the next call): count these inline rather than fail
    // the request; one stall beats a 500.
    return texts.map((t) => count(t));
  }
}

function remember(scope: string, text: string, tokens: number): void {
  let texts = remembered.get(scope);
  if (texts === undefined) remembered.set(scope, (texts = new Map()));
  if (texts.has(text)) return;
  texts.set(text, tokens);
  rememberedChars += text.length;
  rememberedTexts++;
  // Oldest first: the least recently used scope's least recently used texts.
  for (const [oldScope, oldTexts] of remembered) {
    if (rememberedChars <= rememberChars) break;
    for (const oldest of oldTexts.keys()) {
      if (rememberedChars <= rememberChars) break;
      oldTexts.delete(oldest);
      rememberedChars -= oldest.length;
      rememberedTexts--;
    }
    if (oldTexts.size === 0) remembered.delete(oldScope);
  }
}

function requestText(format: 'messages' | 'chat' | 'responses' | 'embeddings' | 'images' | 'speech', request: Json, toolsText: string | undefined): RequestText {
  if (format === 'messages') return messagesRequestText(request, toolsText);
  if (format === 'chat') return chatRequestText(request, toolsText);
  if (format === 'responses') return responsesRequestText(request, toolsText);
  if (format === 'images') return { parts: typeof request['prompt'] === 'string' ? [request['prompt']] : [], fixed: 0 };
  if (format === 'speech') return { parts: typeof request['input'] === 'string' ? [request['input']] : [], fixed: 0 };
  return embeddingsRequestText(request);
}

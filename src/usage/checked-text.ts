import type { ValueRange } from '../http/json-scan.ts';
import { chatRequestText, messagesRequestText, type RequestText } from './request-text.ts';

/**
 * The input text of a body the byte-level checks accepted (http/request-check.ts; issue #17),
 * without parsing the body: each element (the `system` value, each message) is read on its own,
 * and what it contributes is remembered by its bytes. A coding agent resends its system prompt
 * and every earlier message on each turn, so on a later turn only the new messages are parsed.
 *
 * The result is exactly `messagesRequestText` / `chatRequestText` of the whole body: those read
 * only `system`, each message and `tools`, in that order, and each element's share is theirs of a
 * request holding that element alone. The tools are the caller's, as the bytes sent.
 *
 * Remembered per scope (the API key), as counts are (token-count.ts): shared, a hit's speed would
 * tell one key whether another sent the same message.
 */
export interface CheckedElements {
  /** The `system` value, Messages only. */
  readonly system?: ValueRange;
  /** Each message, in order. */
  readonly messages: readonly ValueRange[];
}

interface Piece {
  readonly parts: readonly string[];
  readonly fixed: number;
  /** Characters held for this entry: its key and its texts. */
  readonly size: number;
}

interface Scope {
  readonly system: Map<string, Piece>;
  readonly messages: Map<string, Piece>;
  readonly chat: Map<string, Piece>;
}

/** Characters of keys and texts remembered, at most: about 32 MB at one byte per character. */
let limitChars = 32_000_000;
let heldChars = 0;
const scopes = new Map<string, Scope>();

export function checkedRequestText(format: 'messages' | 'chat', raw: Buffer, elements: CheckedElements, scope: string, toolsText: string | undefined): RequestText {
  let remembered = scopes.get(scope);
  if (remembered === undefined) scopes.set(scope, (remembered = { system: new Map(), messages: new Map(), chat: new Map() }));
  else {
    // Least recently used scope first, when the bound is reached.
    scopes.delete(scope);
    scopes.set(scope, remembered);
  }
  const parts: string[] = [];
  let fixed = 0;
  const add = (piece: Piece): void => {
    for (const part of piece.parts) parts.push(part);
    fixed += piece.fixed;
  };
  if (elements.system) add(pieceOf(remembered.system, raw, elements.system, (value) => messagesRequestText({ system: value })));
  const messages = format === 'messages' ? remembered.messages : remembered.chat;
  const read = format === 'messages' ? (value: unknown) => messagesRequestText({ messages: [value] }) : (value: unknown) => chatRequestText({ messages: [value] });
  for (const range of elements.messages) add(pieceOf(messages, raw, range, read));
  if (toolsText !== undefined) parts.push(toolsText);
  evict();
  return { parts, fixed };
}

function pieceOf(pieces: Map<string, Piece>, raw: Buffer, range: ValueRange, read: (value: unknown) => RequestText): Piece {
  // latin1: one character per byte, so equal keys are equal bytes, whatever the encoding.
  const key = raw.toString('latin1', range.start, range.end);
  const known = pieces.get(key);
  if (known !== undefined) {
    pieces.delete(key);
    pieces.set(key, known);
    return known;
  }
  const text = read(JSON.parse(raw.toString('utf8', range.start, range.end)));
  const piece = { parts: text.parts, fixed: text.fixed, size: key.length + text.parts.reduce((sum, part) => sum + part.length, 0) };
  pieces.set(key, piece);
  heldChars += piece.size;
  return piece;
}

function evict(): void {
  for (const [name, scope] of scopes) {
    if (heldChars <= limitChars) return;
    for (const pieces of [scope.system, scope.messages, scope.chat]) {
      for (const [key, piece] of pieces) {
        if (heldChars <= limitChars) break;
        pieces.delete(key);
        heldChars -= piece.size;
      }
    }
    if (scope.system.size + scope.messages.size + scope.chat.size === 0) scopes.delete(name);
  }
}

/** Sets the most characters remembered (tests); returns the previous bound. */
export function limitCheckedText(chars: number): number {
  const previous = limitChars;
  limitChars = chars;
  evict();
  return previous;
}

/** Characters remembered now (tests). */
export function checkedTextHeld(): number {
  return heldChars;
}

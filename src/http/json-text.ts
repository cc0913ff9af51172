import { isAscii } from 'node:buffer';

/** Bodies under this decode fast as UTF-8 whatever they hold: V8's cliff is past 64 K characters. */
const SMALL_BYTES = 32 * 1024;
/** ASCII is checked in blocks of this size, natively; only blocks with other bytes are walked. */
const BLOCK = 4096;
/** Past this share of non-ASCII bytes, escaping would cost more than the decode it saves. */
const MAX_NON_ASCII_SHARE = 1 / 64;
const BACKSLASH = 0x5c;

/**
 * A JSON body's text for JSON.parse, parsing to exactly what `JSON.parse(raw.toString('utf8'))`
 * gives, but without its cost on large, mostly-ASCII bodies (issue #17). Decoding a body with even
 * one non-ASCII character makes a two-byte string; past 64 K characters V8 puts it in large-object
 * space, and on this machine kind decoding Claude Code's 76 KB request (one `→`) took 630–840 µs
 * against 6 µs for the same bytes as ASCII (hot-path-profile.md §4). So each non-ASCII character is
 * written as its JSON `\u` escape instead, and the rest is read as latin1: a one-byte string a
 * quarter of the size. JSON allows non-ASCII characters only inside strings, where the escape means
 * the same character; outside one, both forms are a syntax error. Invalid UTF-8, which the decoder
 * would turn into U+FFFD, takes the plain decode, as do small bodies and mostly non-ASCII ones.
 */
export function jsonText(raw: Buffer): string {
  if (raw.length < SMALL_BYTES) return raw.toString('utf8');
  if (isAscii(raw)) return raw.toString('latin1');
  const parts: string[] = [];
  let copied = 0; // raw[0, copied) is in parts
  let nonAscii = 0;
  for (let block = 0; block < raw.length; block += BLOCK) {
    const end = Math.min(block + BLOCK, raw.length);
    if (isAscii(raw.subarray(block, end))) continue;
    for (let i = Math.max(block, copied); i < end; ) {
      const lead = raw[i] as number;
      if (lead < 0x80) {
        i++;
        continue;
      }
      // After a backslash the escape would become part of another escape (`\\u…`): decode instead.
      const char = raw[i - 1] === BACKSLASH ? null : decodeOne(raw, i);
      if (char === null) return raw.toString('utf8');
      nonAscii += char.length;
      if (nonAscii > raw.length * MAX_NON_ASCII_SHARE) return raw.toString('utf8');
      parts.push(raw.toString('latin1', copied, i), escape(char.codePoint));
      i += char.length;
      copied = i;
    }
  }
  parts.push(raw.toString('latin1', copied));
  return parts.join('');
}

/** The well-formed UTF-8 sequence at `at` (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF), or null. */
function decodeOne(raw: Buffer, at: number): { codePoint: number; length: number } | null {
  const lead = raw[at] as number;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  if (length === 0 || lead > 0xf4 || at + length > raw.length) return null;
  let codePoint = lead & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const next = raw[at + k] as number;
    if ((next & 0xc0) !== 0x80) return null;
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  const min = length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000;
  if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return null;
  return { codePoint, length };
}

/** `\uXXXX`, or a surrogate pair of them past the BMP. */
function escape(codePoint: number): string {
  if (codePoint < 0x10000) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  const v = codePoint - 0x10000;
  return `\\u${(0xd800 + (v >> 10)).toString(16)}\\u${(0xdc00 + (v & 0x3ff)).toString(16)}`;
}

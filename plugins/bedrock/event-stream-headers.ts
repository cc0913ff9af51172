/**
 * The few headers of an event-stream message the decoder acts on (providers.md §1.2), read from
 * the bytes: names compared as bytes rather than decoded, and a value decoded only when it is one
 * of these. The AWS SDK's codec decodes every name and value of every message into strings and
 * objects, which was most of a Bedrock event's decoding cost (bench/bedrock-costs.ts).
 *
 * It reads what the codec reads: a header given twice counts as its last, and one whose value is
 * not a string has none. A block it cannot walk exactly (an unknown type tag, a length past the
 * block's end) it does not guess at: it says so, and the caller hands the message to the codec.
 */
export interface StreamHeaders {
  messageType: string | undefined;
  eventType: string | undefined;
  exceptionType: string | undefined;
  errorCode: string | undefined;
  errorMessage: string | undefined;
}

type Field = keyof StreamHeaders;
const FIELDS: readonly (readonly [Buffer, Field])[] = [
  [Buffer.from(':message-type'), 'messageType'],
  [Buffer.from(':event-type'), 'eventType'],
  [Buffer.from(':exception-type'), 'exceptionType'],
  [Buffer.from(':error-code'), 'errorCode'],
  [Buffer.from(':error-message'), 'errorMessage'],
];
/**
 * Values every message repeats (its kind, and the event types of InvokeModel's and Converse's
 * streams), as strings made once: found by their bytes, not decoded again per message.
 */
const KNOWN_VALUES: readonly (readonly [Buffer, string])[] = [
  'event', 'chunk', 'exception', 'error',
  'messageStart', 'contentBlockStart', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata',
].map((value) => [Buffer.from(value), value] as const);

/** Bytes of a value after its type tag, for the fixed-size types (event-stream header types 0–9). */
const FIXED_SIZE: readonly number[] = [0, 0, 1, 2, 4, 8, -1, -1, 8, 16];
const BINARY = 6;
const STRING = 7;

function sameBytes(bytes: Buffer, start: number, length: number, known: Buffer): boolean {
  if (known.length !== length) return false;
  for (let i = 0; i < length; i++) if (bytes[start + i] !== known[i]) return false;
  return true;
}

function fieldOf(bytes: Buffer, start: number, length: number): Field | undefined {
  for (let i = 0; i < FIELDS.length; i++) {
    const [name, field] = FIELDS[i]!;
    if (sameBytes(bytes, start, length, name)) return field;
  }
  return undefined;
}

/** A string value as the codec decodes it (UTF-8), made once if it is a known one. */
function stringAt(bytes: Buffer, start: number, length: number): string {
  for (let i = 0; i < KNOWN_VALUES.length; i++) {
    const [known, value] = KNOWN_VALUES[i]!;
    if (sameBytes(bytes, start, length, known)) return value;
  }
  return bytes.toString('utf8', start, start + length);
}

/**
 * Reads the header block `bytes[start, end)` into `into` (every field set, undefined when absent).
 * False when the block is not one it can walk exactly; `into` is then to be ignored.
 */
export function readStreamHeaders(bytes: Buffer, start: number, end: number, into: StreamHeaders): boolean {
  into.messageType = undefined;
  into.eventType = undefined;
  into.exceptionType = undefined;
  into.errorCode = undefined;
  into.errorMessage = undefined;
  let at = start;
  while (at < end) {
    const nameLength = bytes[at]!;
    const nameStart = at + 1;
    // The name, then its value's type tag.
    if (nameStart + nameLength + 1 > end) return false;
    at = nameStart + nameLength;
    const type = bytes[at++]!;
    let size: number;
    if (type === BINARY || type === STRING) {
      if (at + 2 > end) return false;
      size = bytes.readUInt16BE(at);
      at += 2;
    } else {
      size = FIXED_SIZE[type] ?? -1;
      if (size < 0) return false;
    }
    if (at + size > end) return false;
    const field = fieldOf(bytes, nameStart, nameLength);
    if (field !== undefined) into[field] = type === STRING ? stringAt(bytes, at, size) : undefined;
    at += size;
  }
  return true;
}

/**
 * `new Date(ms).toISOString()`, the same text, for timestamps written on every request (a hold's
 * `created_at`, a ledger row's `started_at`). V8 formats each one through its printf (`FormatDate`,
 * then `SNPrintF`): about 7,000 instructions a call, 14,000 a request, more than any one piece of
 * Junction's own per-request code (issue #17, seventeenth session's callgrind of the 76 KB request).
 * Requests in the same second share that second's text, formatted once; only the milliseconds are
 * written each time.
 */
export function isoTime(ms: number): string {
  // Outside V8's date range (or NaN) toISOString throws its own RangeError: let it.
  if (!(Math.abs(ms) <= MAX_TIME)) return new Date(ms).toISOString();
  const whole = Math.trunc(ms); // as Date's TimeClip does
  const second = Math.floor(whole / 1000);
  if (second !== cachedSecond) {
    // Everything but the milliseconds and the `Z`: `YYYY-MM-DDTHH:MM:SS.`, or `±YYYYYY-…` beyond
    // year 9999 or before year 0, as toISOString writes them.
    const text = new Date(second * 1000).toISOString();
    cachedPrefix = text.slice(0, text.length - 4);
    cachedSecond = second;
  }
  const milli = whole - second * 1000;
  return `${cachedPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** The largest time a Date holds, in ms either side of 1970 (ECMA-262 §21.4.1.31). */
const MAX_TIME = 8.64e15;
let cachedSecond = NaN;
let cachedPrefix = '';

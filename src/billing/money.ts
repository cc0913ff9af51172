/**
 * Money in integer pico-dollars (1e-12 USD), as bigint: no floating point anywhere in the ledger
 * (engineering-notes.md, "Money"). A price of P USD per million tokens is P × 10^6 pico-dollars per
 * token, an exact integer for any price written with up to 6 decimals, so one token at the
 * cheapest price is exact. int64 holds balances up to about $9.2 million.
 */
export type Pico = bigint;

const PICO_PER_USD = 10n ** 12n;

/**
 * The largest balance a key may hold: int64 pico-dollars end at about $9.22 million, and SQLite
 * silently turns an overflowing INTEGER into a float. Top-ups and starting balances stop here.
 */
export const MAX_BALANCE_USD = 9_000_000;
export const MAX_BALANCE: Pico = BigInt(MAX_BALANCE_USD) * PICO_PER_USD;
const MAX_DECIMALS = 12;

/**
 * Parses a decimal amount of USD (a config number or a CLI/API string) exactly. Accepts what
 * JavaScript prints for a number, exponent included; refuses more precision than a pico-dollar.
 */
export function usdToPico(amount: number | string): Pico {
  const text = typeof amount === 'number' ? numberText(amount) : amount.trim();
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal amount: ${text}`);
  const [, sign = '', whole = '0', fraction = ''] = match;
  if (fraction.replace(/0+$/, '').length > MAX_DECIMALS) throw new RangeError(`more precise than a pico-dollar: ${text}`);
  const pico = BigInt(whole) * PICO_PER_USD + BigInt(fraction.padEnd(MAX_DECIMALS, '0').slice(0, MAX_DECIMALS) || '0');
  return sign === '-' ? -pico : pico;
}

/**
 * A balance or top-up amount as an operator writes it (CLI flag, admin API): pico-dollars, or what
 * is wrong with it, worded to follow the field's name.
 */
export function balanceAmount(value: number | string): { ok: true; pico: Pico } | { ok: false; problem: string } {
  let pico: Pico;
  try {
    pico = usdToPico(value);
  } catch {
    return { ok: false, problem: 'must be an amount in USD, such as 25 or 0.50, with at most 12 decimals' };
  }
  if (pico <= 0n) return { ok: false, problem: 'must be more than zero' };
  if (pico > MAX_BALANCE) return { ok: false, problem: `must be at most ${MAX_BALANCE_USD} (the per-key maximum)` };
  return { ok: true, pico };
}

/** A price in USD per million tokens → pico-dollars per token (exact; see above). */
export function perMillionToPicoPerToken(perMillion: number): Pico {
  const perMillionPico = usdToPico(perMillion);
  if (perMillionPico % 1_000_000n !== 0n) throw new RangeError(`${perMillion} per million tokens has more than 6 decimals`);
  return perMillionPico / 1_000_000n;
}

/** Exact decimal text of an amount, in USD, without trailing zeros: 1234500000n → "0.0012345". */
export function picoToUsdText(pico: Pico): string {
  const negative = pico < 0n;
  const abs = negative ? -pico : pico;
  const whole = abs / PICO_PER_USD;
  const fraction = (abs % PICO_PER_USD).toString().padStart(MAX_DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** An amount as a JSON number of USD, for clients (usage.cost, balances): display only, never summed by us. */
export function picoToUsdNumber(pico: Pico): number {
  // Below 2^53 pico-dollars (about $9,007) both numbers are exact doubles, and a division is
  // correctly rounded: the double nearest the exact quotient, which is what parsing its exact
  // decimal text gives, without the BigInt division and the text (issue #17: once per Chat answer,
  // for usage.cost, and once per request in the metrics). Property-tested against the text.
  if (pico <= SAFE_PICO && pico >= -SAFE_PICO) return Number(pico) / PICO_PER_USD_NUMBER;
  return Number(picoToUsdText(pico));
}

const SAFE_PICO = BigInt(Number.MAX_SAFE_INTEGER);
const PICO_PER_USD_NUMBER = Number(PICO_PER_USD);

/** Prints a JavaScript number in plain decimal notation (no exponent). */
function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite amount: ${value}`);
  const text = String(value);
  if (!text.includes('e')) return text;
  const [mantissa = '0', exponentText = '0'] = text.split('e');
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = mantissa.replace('-', '').split('.');
  const digits = whole + fraction;
  const point = whole.length + exponent;
  const plain =
    point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + plain;
}

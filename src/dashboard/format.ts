import { picoToUsdText, type Pico } from '../billing/money.ts';

/** How the dashboard writes numbers, money and times. Times are UTC, as the ledger keeps them. */

/** `$1.25`; `unlimited` for a key without a balance. Exact: the ledger's own decimal text. */
export function usd(pico: Pico | null): string {
  return pico === null ? 'unlimited' : `$${picoToUsdText(pico)}`;
}

/** A chart's dollar figure, rounded for reading: `$0.0012`, `$15.3`. */
export function usdShort(value: number): string {
  if (value === 0) return '$0';
  return `$${value >= 100 ? value.toFixed(0) : Number(value.toPrecision(3)).toString()}`;
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** `84 ms`, `1.3 s`; `–` for none. */
export function ms(value: number | null): string {
  if (value === null) return '–';
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
}

/** `2026-11-22 10:00:05` (UTC). */
export function time(at: Date): string {
  return at.toISOString().slice(0, 19).replace('T', ' ');
}

/** `4.2%`; `–` when there is nothing to divide. */
export function percent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`;
}

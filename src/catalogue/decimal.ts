/**
 * Exact decimal text for a price per token from a price per million tokens: 0.3 → "0.0000003".
 * Dividing floats would print 3e-7 or 2.9999999999999997e-7; shifting the decimal point of the
 * number's shortest representation does not.
 */
export function perTokenFromPerMillion(perMillion: number): string {
  const [mantissa = '0', exponentText] = perMillion.toString().split('e');
  const exponent = Number(exponentText ?? 0) - 6;
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = mantissa.replace('-', '').split('.');
  let digits = whole + fraction;
  let point = whole.length + exponent;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length);
  }
  const intPart = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fracPart = digits.slice(point).replace(/0+$/, '');
  return `${negative ? '-' : ''}${intPart}${fracPart === '' ? '' : `.${fracPart}`}`;
}

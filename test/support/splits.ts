/**
 * `bytes` cut at the given points (each taken modulo the length, duplicates and empty pieces
 * dropped): how the property tests deliver a stream in arbitrary chunks.
 */
export function splits(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...points, bytes.length]) {
    if (at > from) chunks.push(bytes.subarray(from, at));
    from = at;
  }
  return chunks;
}

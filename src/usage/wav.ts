/**
 * The length of a WAV file from its header (RIFF/WAVE: a `fmt ` chunk with the byte rate, then a
 * `data` chunk), given its first bytes and its whole size. Transcripts in `text`, `srt` and `vtt`
 * carry no usage, so a gateway that bills from usage alone lets the caller pick an unbilled
 * format (media.md §3.4); for WAV the upload itself says how long it is.
 *
 * A streamed WAV writes 0 or 0xFFFFFFFF as its data size: then the rest of the file is the data.
 * Returns milliseconds, or undefined when the bytes are not a WAV header this reads.
 */
export function wavDurationMs(head: Buffer, fileSize: number): number | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= head.length; ) {
    const id = head.toString('latin1', at, at + 4);
    const size = head.readUInt32LE(at + 4);
    // The first `fmt ` counts, as decoders read it (ffmpeg); a later one is ignored.
    if (id === 'fmt ' && byteRate === undefined) byteRate = at + 24 <= head.length ? pcmByteRate(head, at + 8) : 0;
    if (id === 'data') {
      if (!byteRate) return undefined;
      const rest = fileSize - (at + 8);
      const data = size === 0 || size === 0xffffffff || size > rest ? rest : size;
      return Math.round((Math.max(0, data) / byteRate) * 1000);
    }
    at += 8 + size + (size % 2); // chunks are padded to an even length
  }
  return undefined;
}

/** Uncompressed codings, whose length the header fixes: PCM, IEEE float, A-law, µ-law, and the extensible wrapper. */
const UNCOMPRESSED = new Set([1, 3, 6, 7, 0xfffe]);

/**
 * The byte rate of an uncompressed `fmt ` chunk, or 0 when the header does not hold together. A
 * decoder times the audio by sample rate and block size, not by the byte-rate field, so a header
 * whose byte rate disagrees with them could make a long file look short (review of issue #13).
 */
function pcmByteRate(head: Buffer, at: number): number {
  const coding = head.readUInt16LE(at);
  const channels = head.readUInt16LE(at + 2);
  const sampleRate = head.readUInt32LE(at + 4);
  const byteRate = head.readUInt32LE(at + 8);
  const blockAlign = head.readUInt16LE(at + 12);
  const bits = head.readUInt16LE(at + 14);
  const consistent =
    UNCOMPRESSED.has(coding) &&
    channels >= 1 &&
    sampleRate >= 1000 &&
    sampleRate <= 768_000 &&
    bits >= 8 &&
    blockAlign === channels * Math.ceil(bits / 8) &&
    byteRate === sampleRate * blockAlign;
  return consistent ? byteRate : 0;
}

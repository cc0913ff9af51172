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
  let byteRate = 0;
  for (let at = 12; at + 8 <= head.length; ) {
    const id = head.toString('latin1', at, at + 4);
    const size = head.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 20 <= head.length) byteRate = head.readUInt32LE(at + 16);
    if (id === 'data') {
      if (byteRate === 0) return undefined;
      const rest = fileSize - (at + 8);
      const data = size === 0 || size === 0xffffffff || size > rest ? rest : size;
      return Math.round((Math.max(0, data) / byteRate) * 1000);
    }
    at += 8 + size + (size % 2); // chunks are padded to an even length
  }
  return undefined;
}

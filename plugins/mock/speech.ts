import { PluginRequestError, type FormattedAudio, type SpeechRequest } from '../../src/plugin-host/api.ts';
import { fnv1a } from './hash.ts';

/** 24 kHz, 16-bit, mono: what OpenAI's `pcm` is (media.md §2.2). */
const RATE = 24_000;
/** Each character speaks for this long, up to MAX_SECONDS: a short clip that scales with the text. */
const MS_PER_CHARACTER = 20;
const MAX_SECONDS = 3;

/**
 * Deterministic demo speech: a real WAV (or raw PCM) of a tone whose pitch comes from the text and
 * whose length grows with it, written in chunks as a streaming TTS model would. The demo cannot
 * encode mp3, opus, aac or flac, and says so rather than send bytes of another format.
 */
export function speak(body: SpeechRequest): FormattedAudio {
  const format = body.response_format ?? 'wav';
  if (format !== 'wav' && format !== 'pcm') {
    throw new PluginRequestError(400, `response_format: the demo speech model writes wav or pcm, not ${format}`, 'response_format');
  }
  const samples = Math.round((RATE * Math.min(MAX_SECONDS, ([...body.input].length * MS_PER_CHARACTER) / 1000)) / (body.speed ?? 1));
  const pitch = 220 + (fnv1a(body.input) % 440);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * pitch * i) / RATE)), i * 2);
  const bytes = format === 'wav' ? Buffer.concat([wavHeader(pcm.length), pcm]) : pcm;
  return { format: 'audio', contentType: format === 'wav' ? 'audio/wav' : `audio/pcm;rate=${RATE};channels=1`, body: chunks(bytes, 8192) };
}

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

function wavHeader(dataLength: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataLength, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataLength, 40);
  return header;
}

import { PluginRequestError, type ClientRequest, type FormattedTranscription } from '../../src/plugin-host/api.ts';

const SENTENCES = ['This is the Junction demo transcription.', 'It says the same thing whatever it hears.'];
const TRANSLATED = ['This is the Junction demo translation.', 'It is always in English.'];
/** A file whose length the core could not read is heard at this rate (16 KB/s: 128 kbps audio). */
const BYTES_PER_SECOND = 16_000;

type TranscriptionRequest = Extract<ClientRequest, { endpoint: 'audio_transcriptions' | 'audio_translations' }>;

/**
 * The demo transcription model (issue #13): fixed text, timed over the audio's real length when
 * it is a WAV file (the core reads its header), so the ledger shows the seconds heard as a real
 * transcription model's would. It never listens to the audio.
 */
export function transcribe(request: TranscriptionRequest): FormattedTranscription {
  const file = request.files.find((f) => f.field === 'file');
  if (file === undefined) throw new PluginRequestError(400, 'file is required', 'file');
  const duration = file.audioSeconds ?? file.size / BYTES_PER_SECOND;
  const sentences = request.endpoint === 'audio_translations' ? TRANSLATED : SENTENCES;
  const half = duration / 2;
  return {
    format: 'transcription',
    text: sentences.join(' '),
    duration,
    language: 'english',
    segments: sentences.map((text, i) => ({ start: i * half, end: (i + 1) * half, text: ` ${text}` })),
  };
}

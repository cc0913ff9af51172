import type { TokenUsage } from '../formats/wire.ts';

/**
 * Usage as Junction shows it, in the request log and on /v1/generations: the text token counts
 * always, each media count only where there is one (issue #13), so a text request reads as before.
 */
export function usageFields(usage: TokenUsage): Record<string, number> {
  return {
    input: usage.input,
    output: usage.output,
    cache_read: usage.cacheRead,
    cache_write: usage.cacheWrite,
    reasoning: usage.reasoning,
    ...(usage.inputImage !== undefined && { input_image: usage.inputImage }),
    ...(usage.outputImage !== undefined && { output_image: usage.outputImage }),
    ...(usage.images !== undefined && { images: usage.images }),
    ...(usage.characters !== undefined && { characters: usage.characters }),
    ...(usage.inputAudio !== undefined && { input_audio: usage.inputAudio }),
    ...(usage.outputAudio !== undefined && { output_audio: usage.outputAudio }),
    ...(usage.audioMs !== undefined && { audio_seconds: usage.audioMs / 1000 }),
  };
}

import { ERR, type GatewayError } from '../../errors.ts';
import type { FormEndpoint } from '../../formats/wire.ts';
import type { FormPart, FormScanner } from './form-scanner.ts';
import type { FormRules } from './upload.ts';

/** What an endpoint's form needs before it can be routed, and how it is checked as it streams. */
export interface FormSpec {
  /**
   * Fields read before routing: the model, and what the hold depends on. The body is spooled
   * until they have all been read or the form ends. Null: the whole form is read first.
   */
  readonly routing: readonly string[] | null;
  readonly rules: () => FormRules;
}

const isFile = (part: FormPart, names: readonly string[]): boolean => part.filename !== undefined && names.includes(part.name);

/** The audio to transcribe: one `file` part (media.md §3.1); a second could be the one an upstream reads. */
const audioRules = (): FormRules => ({
  onChunk: (scanner) =>
    scanner.parts.filter((part) => isFile(part, ['file'])).length > 1 ? ERR.invalidField('file: send one audio file, not several', 'file') : undefined,
  onEnd: (scanner) =>
    scanner.parts.some((part) => isFile(part, ['file'])) ? undefined : ERR.invalidField('file is required: the audio, sent as a file part named "file"', 'file'),
});

const IMAGE_NAMES = ['image', 'image[]'];
const IMAGE_MAGIC: readonly ((head: Buffer) => boolean)[] = [
  (head) => head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), // PNG
  (head) => head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff, // JPEG
  (head) => head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP',
];

/**
 * Images to edit: `image` or `image[]` parts (the openai SDK sends arrays as `image[]`; media.md
 * §1.2), and an optional `mask`, each a PNG, JPEG or WebP by its first bytes, whatever its name or
 * declared type says. A part is judged as soon as its first 12 bytes have been read.
 */
const imageRules = (): FormRules => {
  const judged = new WeakSet<FormPart>();
  return {
    onChunk: (scanner) => {
      for (const part of scanner.parts) {
        if (judged.has(part) || !isFile(part, [...IMAGE_NAMES, 'mask'])) continue;
        if (part.head.length < 12 && part.end === undefined) continue;
        judged.add(part);
        if (!IMAGE_MAGIC.some((magic) => magic(part.head))) return notAnImage(part);
      }
      return undefined;
    },
    onEnd: (scanner) => {
      if (!scanner.parts.some((part) => isFile(part, IMAGE_NAMES))) {
        return ERR.invalidField('image is required: one or more PNG, JPEG or WebP files, sent as parts named "image" or "image[]"', 'image');
      }
      const prompt = scanner.fields.get('prompt');
      return prompt?.some((text) => text !== '') === true ? undefined : ERR.invalidField('prompt is required: the edit to make', 'prompt');
    },
  };
};

function notAnImage(part: FormPart): GatewayError {
  return ERR.invalidField(`${part.name} "${part.filename ?? ''}" is not a PNG, JPEG or WebP image`, part.name.replace('[]', ''));
}

export const FORM_SPECS: Readonly<Record<FormEndpoint, FormSpec>> = {
  audio_transcriptions: { routing: ['model'], rules: audioRules },
  audio_translations: { routing: ['model'], rules: audioRules },
  // Read whole before routing: the hold prices `n` images at their size and quality, and every
  // picture sent as image tokens, which only the whole form tells (review of issue #13). Edits
  // are small beside audio, and a form read whole can be retried.
  images_edits: { routing: null, rules: imageRules },
};

/** The routing fields all read, or the form over. */
export function routable(spec: FormSpec, scanner: FormScanner): boolean {
  return scanner.ended || (spec.routing !== null && spec.routing.every((field) => scanner.fields.has(field)));
}

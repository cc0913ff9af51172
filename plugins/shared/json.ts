/** A JSON object, as the plugins read upstream answers. */
export type Json = Record<string, unknown>;

/** An object, or an empty one: plugins read upstream JSON defensively. */
export const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});

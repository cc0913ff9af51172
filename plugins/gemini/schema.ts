/**
 * JSON Schema → the OpenAPI-3.0 subset Gemini's `functionDeclarations[].parameters` and
 * `responseSchema` accept (issue #15; providers.md §3.3). Gemini's proto parser rejects the whole
 * request at the first key it does not know (`additionalProperties`, `$schema`, `const`,
 * `exclusiveMinimum`…), and Claude Code's and zod's schemas carry them: so the schema is adapted,
 * not refused. Only keys Gemini knows survive; `const` becomes a one-value enum; `type: [T, "null"]`
 * and `anyOf: [T, {type: "null"}]` become `nullable`; local `$ref`s are inlined (a recursive one
 * cannot be, and is refused); enums are strings.
 */
export type JsonSchema = Record<string, unknown>;

const KEPT = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'properties', 'required', 'propertyOrdering', 'items',
  'anyOf', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties',
  'maxProperties', 'default', 'example',
]);

/** A schema Gemini cannot take even adapted (a recursive `$ref`), with the JSON path of the problem. */
export class SchemaError extends Error {}

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The adapted schema, or undefined for an object schema with no properties (Gemini wants no
 * `parameters` then). `path` names the schema in errors (e.g. `tools[2].input_schema`).
 */
export function geminiSchema(schema: JsonSchema, path: string): JsonSchema | undefined {
  const defs = { ...(isSchema(schema['$defs']) ? schema['$defs'] : {}), ...(isSchema(schema['definitions']) ? schema['definitions'] : {}) };
  const adapted = adapt(schema, defs, path, []);
  if (adapted['type'] === 'object' && (!isSchema(adapted['properties']) || Object.keys(adapted['properties']).length === 0)) return undefined;
  return adapted;
}

function adapt(schema: JsonSchema, defs: JsonSchema, path: string, seen: readonly string[]): JsonSchema {
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1];
    const target = name === undefined ? undefined : defs[name];
    if (name === undefined || !isSchema(target)) throw new SchemaError(`${path}: $ref ${JSON.stringify(ref)} does not name a local definition`);
    if (seen.includes(name)) throw new SchemaError(`${path}: $ref ${JSON.stringify(ref)} is recursive, which Gemini's schemas cannot express`);
    // Siblings of $ref (a description) are kept over the definition's own.
    const { $ref: _ref, ...siblings } = schema;
    return adapt({ ...target, ...siblings }, defs, path, [...seen, name]);
  }
  const out: JsonSchema = {};
  // A union with null is a nullable type; several other types are alternatives.
  const types = Array.isArray(schema['type']) ? schema['type'].filter((t): t is string => typeof t === 'string') : typeof schema['type'] === 'string' ? [schema['type']] : [];
  const nonNull = types.filter((t) => t !== 'null');
  if (types.length > nonNull.length) out['nullable'] = true;
  if (nonNull.length === 1) out['type'] = nonNull[0];
  else if (nonNull.length > 1) out['anyOf'] = nonNull.map((type) => ({ type }));
  const alternatives = [...(Array.isArray(schema['anyOf']) ? schema['anyOf'] : []), ...(Array.isArray(schema['oneOf']) ? schema['oneOf'] : [])].filter(isSchema);
  if (alternatives.length > 0) {
    const rest = alternatives.filter((a) => a['type'] !== 'null');
    if (rest.length < alternatives.length) out['nullable'] = true;
    const adapted = rest.map((a, i) => adapt(a, defs, `${path}.anyOf[${i}]`, seen));
    if (adapted.length === 1 && out['type'] === undefined) Object.assign(out, adapted[0]);
    else if (adapted.length > 0) out['anyOf'] = adapted;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT.has(key) || key === 'type' || key === 'anyOf') continue;
    if (key === 'properties' && isSchema(value)) {
      out['properties'] = Object.fromEntries(Object.entries(value).filter(([, v]) => isSchema(v)).map(([name, v]) => [name, adapt(v as JsonSchema, defs, `${path}.properties.${name}`, seen)]));
    } else if (key === 'items' && isSchema(value)) {
      out['items'] = adapt(value, defs, `${path}.items`, seen);
    } else if (key === 'enum' && Array.isArray(value)) {
      enumInto(out, value);
    } else {
      out[key] = value;
    }
  }
  if ('const' in schema) enumInto(out, [schema['const']]);
  if (Array.isArray(out['required']) && isSchema(out['properties'])) {
    const properties = out['properties'];
    out['required'] = out['required'].filter((name) => typeof name === 'string' && name in properties);
  }
  return out;
}

/** Gemini's enums are strings: other values are written as strings, the type with them. */
function enumInto(out: JsonSchema, values: readonly unknown[]): void {
  const strings = values.filter((v) => v !== null).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  if (values.includes(null)) out['nullable'] = true;
  out['enum'] = strings;
  if (values.some((v) => v !== null && typeof v !== 'string')) out['format'] = 'enum';
  out['type'] = 'string';
}

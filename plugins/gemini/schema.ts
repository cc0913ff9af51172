/**
 * JSON Schema → the OpenAPI-3.0 subset Gemini's `functionDeclarations[].parameters` and
 * `responseSchema` accept (issue #15; providers.md §3.3). Gemini's parser refuses the whole
 * request at the first word it does not know (`additionalProperties`, `$schema`, `const`,
 * `exclusiveMinimum`…) and at shapes it cannot represent (an object with no properties, a node with
 * no type, `items` that is not one schema); Claude Code's, zod's and MCP servers' schemas have all
 * of these. So the schema is adapted, never refused:
 * - only words Gemini knows survive; `allOf` members are merged; `oneOf` is `anyOf`;
 * - `type: [T, "null"]` and `anyOf: [T, {type: "null"}]` are `nullable`;
 * - a node with no type gets one from its shape (properties: object, items: array, else string);
 * - an object with no properties (a free-form map) is a JSON string the model fills in, said so;
 * - `items: false`, tuple `items: […]` and `prefixItems` become one item schema (`anyOf` of them);
 * - local `$ref`s (any JSON pointer into the document) are inlined; a recursive one is cut at a
 *   fixed depth to a JSON string, said so in its description;
 * - enums must be strings: a non-string `enum`/`const` keeps its type and lists its values in the
 *   description instead, so the arguments come back with their types.
 */
export type JsonSchema = Record<string, unknown>;

const KEPT = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'properties', 'required', 'propertyOrdering', 'items',
  'anyOf', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties',
  'maxProperties', 'default', 'example',
]);
/** How deep a recursive `$ref` is followed before the rest is a JSON string. */
const MAX_REF_DEPTH = 3;

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The adapted schema, or undefined for an object schema with no properties (Gemini wants no `parameters` then). */
export function geminiSchema(schema: JsonSchema, _path: string): JsonSchema | undefined {
  if (!isSchema(schema['properties']) || Object.keys(schema['properties']).length === 0) {
    if (schema['type'] === 'object' || schema['type'] === undefined) return undefined;
  }
  return adapt(schema, schema, []);
}

/** A JSON pointer (`#/$defs/A`, `#/properties/start`, `#`) into the root. */
function resolve(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter((s) => s !== '')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = isSchema(node) ? node[key] : undefined;
  }
  return isSchema(node) ? node : undefined;
}

const jsonString = (description: string | undefined, why: string): JsonSchema => ({ type: 'string', description: `${description ? `${description} ` : ''}(${why}: write it as a JSON text)` });

function adapt(input: JsonSchema, root: JsonSchema, refs: readonly string[]): JsonSchema {
  let schema = input;
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = resolve(root, ref);
    const description = typeof schema['description'] === 'string' ? schema['description'] : undefined;
    if (target === undefined) return jsonString(description, `a value of the schema at ${ref}`);
    if (refs.filter((r) => r === ref).length >= MAX_REF_DEPTH) return jsonString(description ?? (typeof target['description'] === 'string' ? target['description'] : undefined), 'nested further');
    const { $ref: _ref, ...siblings } = schema;
    return adapt({ ...target, ...siblings }, root, [...refs, ref]);
  }
  // allOf: one schema with every member's words (later members win on conflicts).
  if (Array.isArray(schema['allOf'])) {
    const { allOf, ...rest } = schema;
    const members = (allOf as unknown[]).filter(isSchema).map((m) => (typeof m['$ref'] === 'string' ? (resolve(root, m['$ref']) ?? {}) : m));
    schema = members.reduce<JsonSchema>(
      (merged, m) => ({ ...merged, ...m, properties: { ...(isSchema(merged['properties']) ? merged['properties'] : {}), ...(isSchema(m['properties']) ? m['properties'] : {}) }, required: [...(Array.isArray(merged['required']) ? merged['required'] : []), ...(Array.isArray(m['required']) ? m['required'] : [])] }),
      rest,
    );
    if (Object.keys(schema['properties'] as JsonSchema).length === 0) delete schema['properties'];
    if ((schema['required'] as unknown[]).length === 0) delete schema['required'];
  }
  const out: JsonSchema = {};
  const types = Array.isArray(schema['type']) ? schema['type'].filter((t): t is string => typeof t === 'string') : typeof schema['type'] === 'string' ? [schema['type']] : [];
  const nonNull = types.filter((t) => t !== 'null');
  if (types.length > nonNull.length) out['nullable'] = true;
  const alternatives = [...(Array.isArray(schema['anyOf']) ? schema['anyOf'] : []), ...(Array.isArray(schema['oneOf']) ? schema['oneOf'] : [])].filter(isSchema);
  const rest = alternatives.filter((a) => a['type'] !== 'null');
  if (rest.length < alternatives.length) out['nullable'] = true;
  if (nonNull.length > 1) out['anyOf'] = nonNull.map((type) => adapt({ ...schema, type, anyOf: undefined, oneOf: undefined }, root, refs));
  else if (rest.length > 1) out['anyOf'] = rest.map((a) => adapt(a, root, refs));
  else if (rest.length === 1 && nonNull.length === 0) {
    const { anyOf: _a, oneOf: _o, ...own } = schema;
    Object.assign(out, adapt({ ...rest[0], ...own }, root, refs));
    return out;
  }
  if (out['anyOf'] !== undefined) {
    if (typeof schema['description'] === 'string') out['description'] = schema['description'];
    return out;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT.has(key) || key === 'type' || key === 'anyOf' || key === 'enum' || key === 'items' || key === 'properties') continue;
    out[key] = value;
  }
  // The type: given, or from the shape.
  const properties = isSchema(schema['properties']) ? schema['properties'] : undefined;
  const type = nonNull[0] ?? (properties ? 'object' : schema['items'] !== undefined || schema['prefixItems'] !== undefined ? 'array' : enumType(schema) ?? 'string');
  if (type === 'object') {
    const names = Object.keys(properties ?? {}).filter((name) => isSchema(properties![name]));
    if (names.length === 0) return { ...jsonString(typeof schema['description'] === 'string' ? schema['description'] : undefined, 'an object of any keys'), ...(out['nullable'] === true && { nullable: true }) };
    out['type'] = 'object';
    out['properties'] = Object.fromEntries(names.map((name) => [name, adapt(properties![name] as JsonSchema, root, refs)]));
    if (Array.isArray(schema['required'])) out['required'] = schema['required'].filter((name) => typeof name === 'string' && names.includes(name));
    return out;
  }
  out['type'] = type;
  if (type === 'array') out['items'] = itemsOf(schema, root, refs);
  enumInto(out, schema);
  return out;
}

/** One item schema from `items` (a schema, a tuple, `false`) or `prefixItems`. */
function itemsOf(schema: JsonSchema, root: JsonSchema, refs: readonly string[]): JsonSchema {
  const items = schema['items'];
  const tuple = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : Array.isArray(items) ? items : [];
  const members = [...tuple.filter(isSchema), ...(isSchema(items) ? [items] : [])];
  if (members.length === 0) return { type: 'string' };
  if (members.length === 1) return adapt(members[0]!, root, refs);
  return { anyOf: members.map((m) => adapt(m, root, refs)) };
}

/** The type a typeless `enum`/`const` implies. */
function enumType(schema: JsonSchema): string | undefined {
  const values = Array.isArray(schema['enum']) ? schema['enum'] : 'const' in schema ? [schema['const']] : [];
  const first = values.find((v) => v !== null);
  if (first === undefined) return undefined;
  return typeof first === 'number' ? (Number.isInteger(first) ? 'integer' : 'number') : typeof first === 'boolean' ? 'boolean' : 'string';
}

/**
 * Gemini's enums are strings. String values stay an enum; others keep their type and are listed in
 * the description, so the model still knows them and its arguments keep their types.
 */
function enumInto(out: JsonSchema, schema: JsonSchema): void {
  const values = Array.isArray(schema['enum']) ? schema['enum'] : 'const' in schema ? [schema['const']] : undefined;
  if (values === undefined) return;
  if (values.includes(null)) out['nullable'] = true;
  const present = values.filter((v) => v !== null);
  if (present.every((v) => typeof v === 'string') && out['type'] === 'string') {
    out['enum'] = present;
    return;
  }
  const listed = `One of: ${present.map((v) => JSON.stringify(v)).join(', ')}.`;
  out['description'] = typeof out['description'] === 'string' ? `${out['description']} ${listed}` : listed;
}

import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { geminiSchema, type JsonSchema } from '../../../plugins/gemini/schema.ts';

/** Words Gemini's proto parser refuses (providers.md §3.3): none may survive the adaptation. */
const REFUSED = ['$schema', '$id', '$ref', '$defs', 'definitions', 'additionalProperties', 'propertyNames', 'patternProperties', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'uniqueItems', 'examples', 'const', 'oneOf', 'not', 'if'];

function keysIn(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysIn(v, into));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      // Property names are the schema's own words, not keywords.
      if (key === 'properties' && typeof inner === 'object' && inner !== null) Object.values(inner).forEach((v) => keysIn(v, into));
      else keysIn(inner, into);
    }
  }
  return into;
}

describe('Gemini schema subset (providers.md §3.3)', () => {
  it('drops what Gemini refuses and keeps what it takes', () => {
    const out = geminiSchema(
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        additionalProperties: false,
        properties: { n: { type: 'integer', exclusiveMinimum: 0, description: 'count' }, tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, minItems: 1 } },
        required: ['n', 'ghost'],
      },
      'tools[0]',
    );
    expect(out).to.deep.equal({ type: 'object', properties: { n: { type: 'integer', description: 'count' }, tags: { type: 'array', items: { type: 'string' }, minItems: 1 } }, required: ['n'] });
  });

  it('nullable unions, const and non-string enums', () => {
    expect(geminiSchema({ type: 'object', properties: { a: { type: ['string', 'null'] } } }, 'p')).to.deep.equal({ type: 'object', properties: { a: { type: 'string', nullable: true } } });
    expect(geminiSchema({ type: 'object', properties: { a: { anyOf: [{ type: 'number' }, { type: 'null' }] } } }, 'p')).to.deep.equal({ type: 'object', properties: { a: { type: 'number', nullable: true } } });
    expect(geminiSchema({ type: 'object', properties: { a: { const: 'x' } } }, 'p')).to.deep.equal({ type: 'object', properties: { a: { enum: ['x'], type: 'string' } } });
    // Non-string values keep their type (the arguments come back as numbers), listed in the description.
    expect(geminiSchema({ type: 'object', properties: { a: { enum: [1, 2] } } }, 'p')).to.deep.equal({ type: 'object', properties: { a: { type: 'integer', description: 'One of: 1, 2.' } } });
    expect(geminiSchema({ type: 'object', properties: { a: { type: ['string', 'number'] } } }, 'p')).to.deep.equal({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'number' }] } } });
  });

  it('inlines local $refs, any JSON pointer; a recursive one is cut at a depth, as a JSON string', () => {
    const out = geminiSchema({ type: 'object', $defs: { City: { type: 'object', properties: { name: { type: 'string' } } } }, properties: { home: { $ref: '#/$defs/City', description: 'where' } } }, 'p');
    expect(out).to.deep.equal({ type: 'object', properties: { home: { type: 'object', properties: { name: { type: 'string' } }, description: 'where' } } });
    // zod-to-json-schema's default for a reused schema (MCP servers): a pointer into properties.
    const reused = geminiSchema({ type: 'object', properties: { start: { type: 'string', format: 'date-time' }, end: { $ref: '#/properties/start' } } }, 'p');
    expect(reused).to.deep.equal({ type: 'object', properties: { start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' } } });
    const recursive = { type: 'object', $defs: { Node: { type: 'object', properties: { value: { type: 'string' }, next: { $ref: '#/$defs/Node' } } } }, properties: { head: { $ref: '#/$defs/Node' } } };
    const text = JSON.stringify(geminiSchema(recursive, 'tools[1].input_schema'));
    expect(text).to.include('nested further');
    expect(text).to.not.include('$ref');
  });

  it('shapes Gemini cannot take: free-form maps, typeless nodes, tuples, allOf', () => {
    const out = geminiSchema(
      {
        type: 'object',
        properties: {
          metadata: { type: 'object', additionalProperties: {} },
          anything: { description: 'any value' },
          pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
          none: { type: 'array', items: false },
          config: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } } }], description: 'cfg' },
        },
      },
      'p',
    ) as { properties: Record<string, JsonSchema> };
    expect(out.properties['metadata']).to.deep.include({ type: 'string' });
    expect(out.properties['anything']).to.deep.include({ type: 'string', description: 'any value' });
    expect(out.properties['pair']).to.deep.equal({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } });
    expect(out.properties['none']).to.deep.equal({ type: 'array', items: { type: 'string' } });
    expect(out.properties['config']).to.deep.equal({ type: 'object', description: 'cfg', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] });
  });

  it('an object with no properties means no parameters', () => {
    expect(geminiSchema({ type: 'object', properties: {} }, 'p')).to.equal(undefined);
    expect(geminiSchema({ type: 'object', additionalProperties: false }, 'p')).to.equal(undefined);
  });

  it('every tool of the real Claude Code request adapts to words Gemini takes', () => {
    const request = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as { tools: { input_schema: JsonSchema }[] };
    const adapted = request.tools.map((tool, i) => geminiSchema(tool.input_schema, `tools[${i}].input_schema`));
    const words = keysIn(adapted);
    expect(REFUSED.filter((word) => words.has(word))).to.deep.equal([]);
    expect(adapted.filter((a) => a !== undefined).length).to.be.above(10);
  });
});

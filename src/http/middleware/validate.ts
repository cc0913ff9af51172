import type { z } from 'zod';
import { ERR, type Surface } from '../../errors.ts';
import { flattenIssues, issueMessage } from '../../validation/issues.ts';
import type { GatewayMiddleware } from '../state.ts';

/**
 * Validates the parsed body against an endpoint's schema. The first problem becomes a 400 naming
 * the field: `messages.2.role: …` in the Messages format (Anthropic's dotted style) and
 * `param: "messages[2].role"` in the Chat format. The body is not replaced: unknown fields and
 * the original bytes stay as sent.
 */
export function createValidator(schema: z.ZodType): GatewayMiddleware {
  return (ctx, next) => {
    // Checked as bytes against the same rules already (request-check.ts, issue #17).
    if (ctx.state.head !== undefined) return next();
    const result = schema.safeParse(ctx.state.body, { error: issueMessage });
    if (!result.success) {
      const issue = flattenIssues(result.error)[0];
      if (issue) {
        const field = fieldName(issue.path, ctx.state.surface);
        throw ERR.invalidField(`${field}: ${issue.message}`, field);
      }
    }
    return next();
  };
}

function fieldName(path: readonly PropertyKey[], surface: Surface): string {
  if (path.length === 0) return '(body)';
  if (surface === 'messages') return path.map(String).join('.');
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

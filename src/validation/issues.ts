import type { z } from 'zod';

/**
 * Turns zod issues into short messages that name the field, shared by config validation and
 * request validation so both read alike.
 */

export interface FieldIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

type RawIssue = z.core.$ZodRawIssue;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function bound(issue: RawIssue, word: 'least' | 'most'): string {
  const limit = String(issue['minimum'] ?? issue['maximum']);
  switch (issue['origin']) {
    case 'array':
      return `must have at ${word} ${limit} item${limit === '1' ? '' : 's'}`;
    case 'string':
      return limit === '1' && word === 'least' ? 'must not be empty' : `must have at ${word} ${limit} characters`;
    default: {
      const inclusive = issue['inclusive'] !== false;
      const op = word === 'least' ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
      return `must be ${op} ${limit}`;
    }
  }
}

/** A zod error map: pass as `{ error: issueMessage }` to `safeParse`. */
export function issueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue['expected'] === 'int') return `must be an integer, got ${String(issue.input)}`;
      return `must be ${String(issue['expected'])}, got ${describe(issue.input)}`;
    case 'too_small':
      return bound(issue, 'least');
    case 'too_big':
      return bound(issue, 'most');
    case 'invalid_value': {
      const values = (issue['values'] as readonly unknown[] | undefined) ?? [];
      return `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(issue.input) ?? 'nothing'}`;
    }
    case 'invalid_union': {
      const options = issue['options'] as readonly unknown[] | undefined;
      if (Array.isArray(options) && typeof issue['discriminator'] === 'string') {
        const input = issue.input as Record<string, unknown> | undefined;
        const got = JSON.stringify(input?.[issue['discriminator']]) ?? 'nothing';
        return `must be one of ${options.map((v) => JSON.stringify(v)).join(', ')}, got ${got}`;
      }
      const branches = (issue['errors'] as readonly (readonly z.core.$ZodIssue[])[] | undefined) ?? [];
      // Only when every branch refused the input's type outright is "must be A or B" the answer.
      const expected = branches
        .map((branch) => (isRootTypeMismatch(branch) ? (branch[0] as { expected?: unknown }).expected : undefined))
        .filter((e): e is string => typeof e === 'string');
      if (expected.length === branches.length && expected.length > 0) {
        return `must be ${[...new Set(expected)].join(' or ')}, got ${describe(issue.input)}`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Flattens a zod error; each unknown key becomes its own issue located at the key itself. */
export function flattenIssues(error: z.ZodError): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...issue.path, key], message: 'unknown key' });
    } else if (issue.code === 'invalid_union' && issue.message === 'Invalid input') {
      // No branch matched, but one had the input's type (an array of five stop strings): its
      // complaint is the useful one.
      const matching = issue.errors.find((branch) => !isRootTypeMismatch(branch)) ?? issue.errors[0] ?? [];
      const first = matching[0];
      out.push(first ? { path: [...issue.path, ...first.path], message: first.message } : issue);
    } else {
      out.push({ path: issue.path, message: issue.message });
    }
  }
  return out;
}

function isRootTypeMismatch(branch: readonly z.core.$ZodIssue[]): boolean {
  return branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0;
}

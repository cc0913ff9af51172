import { formatPath, type PathSegment } from './yaml-path.ts';

/** One problem found in a config file, located by its YAML path. */
export interface ConfigIssue {
  readonly path: readonly PathSegment[];
  readonly message: string;
}

export interface Interpolated {
  readonly value: unknown;
  readonly issues: ConfigIssue[];
  /** Environment variables each interpolated string referred to, keyed by its formatted YAML path. */
  readonly references: ReadonlyMap<string, readonly string[]>;
}

// ${NAME} or ${NAME:-default}; `$${` escapes a literal `${`.
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string of a parsed YAML tree.
 * `:-` follows the shell: the default applies when the variable is unset or empty.
 * A `${VAR}` that is unset and has no default is an issue at its YAML path.
 */
export function interpolate(tree: unknown, env: NodeJS.ProcessEnv): Interpolated {
  const issues: ConfigIssue[] = [];
  const references = new Map<string, string[]>();

  const visit = (node: unknown, path: PathSegment[]): unknown => {
    if (typeof node === 'string') return node.includes('${') ? substitute(node, path) : node;
    if (Array.isArray(node)) return node.map((item, index) => visit(item, [...path, index]));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) out[key] = visit(value, [...path, key]);
      return out;
    }
    return node;
  };

  const substitute = (text: string, path: PathSegment[]): string => {
    const names: string[] = [];
    const result = text.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
      if (name === undefined) return match.slice(1);
      names.push(name);
      const value = env[name];
      if (value !== undefined && (fallback === undefined || value !== '')) return value;
      if (fallback !== undefined) return fallback;
      issues.push({ path, message: `environment variable ${name} is not set (write \${${name}:-} to allow it to be empty)` });
      return '';
    });
    if (names.length > 0) references.set(formatPath(path), names);
    return result;
  };

  return { value: visit(tree, []), issues, references };
}

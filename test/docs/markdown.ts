// Just enough Markdown reading for the docs test: fenced code blocks, relative links and the anchors
// GitHub gives headings. Not a Markdown parser: the docs stay within what these helpers read.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface MarkdownFile {
  /** Relative to the repository, for test titles and messages. */
  readonly name: string;
  readonly absolute: string;
  readonly text: string;
}

/** README.md and every page of docs/: the documents the test keeps honest. */
export function docFiles(): MarkdownFile[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((name) => {
    const absolute = path.join(ROOT, name);
    return { name, absolute, text: readFileSync(absolute, 'utf8') };
  });
}

export interface CodeBlock {
  readonly lang: string;
  readonly body: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The HTML comment on the line right before the fence (`fragment: models`), if any. */
  readonly marker: string | undefined;
}

const FENCE = /^(`{3,})(\S*)\s*$/;
const MARKER = /^<!--\s*(.*?)\s*-->$/;

export function codeBlocks(text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) continue;
    const fence = open[1] ?? '```';
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').trim() !== fence) end++;
    if (end === lines.length) throw new Error(`line ${i + 1}: code fence never closed`);
    blocks.push({
      lang: open[2] ?? '',
      body: lines.slice(i + 1, end).join('\n'),
      line: i + 1,
      marker: MARKER.exec((lines[i - 1] ?? '').trim())?.[1],
    });
    i = end;
  }
  return blocks;
}

/** The text's lines with code blocks blanked (line numbers kept): a `#` comment there is no heading. */
function outsideCode(text: string): string[] {
  const lines = text.split('\n');
  for (const block of codeBlocks(text)) {
    const last = block.line + block.body.split('\n').length;
    for (let i = block.line - 1; i <= last; i++) lines[i] = '';
  }
  return lines;
}

export interface Link {
  readonly target: string;
  readonly line: number;
}

/** Inline links whose target is in this repository (no scheme, not mail). */
export function relativeLinks(text: string): Link[] {
  const links: Link[] = [];
  outsideCode(text)
    .map((line) => line.replace(/`[^`]*`/g, ''))
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1] ?? '';
        if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ target, line: index + 1 });
      }
    });
  return links;
}

/** The anchors GitHub makes of a document's headings, `-1`, `-2`… for repeats. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideCode(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    // A link in a heading counts by its text; backticks go with the other punctuation.
    const title = (heading[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = title
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The built-in reference topics, in the order they are listed (spec 020 §Resource Content). */
export const REFERENCE_TOPIC_NAMES = [
  'authoring',
  'tools',
  'apps',
  'read-tool',
  'change-tool',
  'execute-tool',
  'notifications',
] as const;

/** One reference topic: its name, title and description (from the Markdown), and the text. */
export interface ReferenceTopic {
  readonly name: string;
  readonly uri: string;
  readonly title: string;
  readonly description: string;
  readonly mimeType: 'text/markdown';
  readonly text: string;
}

/** The three reference URIs every tool result carries (021 §Output, 022, 036). */
export const RESULT_REFERENCES: readonly string[] = [
  'dagu://reference/authoring',
  'dagu://reference/tools',
  'dagu://reference/notifications',
];

/**
 * Loads the topics from `apps/mcp-gateway/reference-topics/<name>.md` (shipped
 * beside `src/` and `dist/`, so both resolve the same folder). Read once at
 * start: topics never change while the gateway runs.
 *
 * @throws Error when a topic file is missing (a packaging bug, caught at start)
 */
export function loadReferenceTopics(
  dir = join(__dirname, '..', '..', 'reference-topics'),
): Map<string, ReferenceTopic> {
  const topics = new Map<string, ReferenceTopic>();
  for (const name of REFERENCE_TOPIC_NAMES) {
    const text = readFileSync(join(dir, `${name}.md`), 'utf8');
    const { title, description } = describe(text, name);
    topics.set(name, { name, uri: `dagu://reference/${name}`, title, description, mimeType: 'text/markdown', text });
  }
  return topics;
}

/** Title = the first `# ` heading; description = the first paragraph after it. */
function describe(text: string, fallback: string): { title: string; description: string } {
  const lines = text.split('\n');
  const headingIndex = lines.findIndex((l) => l.startsWith('# '));
  const title = headingIndex >= 0 ? (lines[headingIndex] ?? '').slice(2).trim() : fallback;
  const rest = lines.slice(headingIndex + 1);
  const start = rest.findIndex((l) => l.trim() !== '');
  const paragraph: string[] = [];
  for (const line of start >= 0 ? rest.slice(start) : []) {
    if (line.trim() === '' || line.startsWith('#')) break;
    paragraph.push(line.trim());
  }
  return { title, description: paragraph.join(' ') };
}

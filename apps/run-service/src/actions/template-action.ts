import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ActionError, errorMessage, type ActionOutput, type WithMap } from './action-types';
import { renderTemplate } from './template-exec';

/**
 * `template.render` (dagu-actions §1.7): renders `with.template` (the host
 * already turned a `template_ref` into it) over `with.data` (exposed as `.`;
 * `{}` when absent). The result goes to stdout, or to the `with.output` file
 * (relative to the step's working directory; parent directories created;
 * mode 0600) with nothing on stdout.
 *
 * @throws ActionError with the template error (`template: parse error`,
 *   `map has no entry for key`, `function "<name>" not defined`)
 */
export async function runTemplateRender(w: WithMap): Promise<ActionOutput> {
  if (typeof w.template !== 'string') throw new ActionError('with.template must be a string');
  let text: string;
  try {
    text = renderTemplate(w.template, w.data ?? {});
  } catch (error) {
    throw new ActionError(errorMessage(error));
  }
  if (typeof w.output !== 'string' || w.output === '') return { stdout: text };
  const path = isAbsolute(w.output) ? w.output : resolve(process.cwd(), w.output);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text, { mode: 0o600 });
  return { stdout: '' };
}

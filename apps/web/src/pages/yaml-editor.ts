import { api, seg } from '../api';
import { errorBox, h, replace } from '../dom';

/** The `POST /dags/{name}/validate` reply (022 preview, the same `dag.validate` as `dagu_change`). */
interface Validation {
  valid: boolean;
  errors: string[];
  warnings?: string[];
  errorLocations?: Array<{ index: number; line: number; column: number }>;
}

/**
 * The YAML of a DAG: read-only for viewers and operators; for developers an
 * editor that validates as they type (through the same preview as `dagu_change`) and marks
 * each error at its line (`errorLocations`) in the gutter and in the list under it. A click on
 * an error puts the cursor on its line. Save writes with `PUT /dags/{name}`.
 */
export function yamlEditor(name: string, spec: string, editable: boolean, onSaved: () => void): HTMLElement {
  const text = h('textarea', {
    id: 'yaml',
    class: 'code',
    spellcheck: 'false',
    readonly: !editable,
    'aria-describedby': 'yaml-errors',
    wrap: 'off',
  });
  text.value = spec;
  const gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' });
  const errorsBox = h('div', { id: 'yaml-errors', 'aria-live': 'polite' });
  const message = h('span', { role: 'status', class: 'small' });
  let marks = new Map<number, string>();

  const drawGutter = (): void => {
    const lines = text.value.split('\n').length;
    replace(
      gutter,
      ...Array.from({ length: lines }, (_, i) => {
        const mark = marks.get(i + 1);
        return h(
          'div',
          { class: mark ? 'ln err' : 'ln', title: mark, 'data-line': i + 1 },
          mark ? `● ${i + 1}` : String(i + 1),
        );
      }),
    );
    gutter.scrollTop = text.scrollTop;
  };
  const goToLine = (line: number): void => {
    const offset = text.value
      .split('\n')
      .slice(0, line - 1)
      .reduce((n, l) => n + l.length + 1, 0);
    text.focus();
    text.setSelectionRange(offset, offset);
  };
  const validate = async (): Promise<Validation | undefined> => {
    if (text.value.trim() === '') return undefined;
    try {
      const result = await api<Validation>(`/dags/${seg(name)}/validate`, {
        method: 'POST',
        body: { spec: text.value },
      });
      marks = new Map();
      const lineOf = new Map((result.errorLocations ?? []).map((l) => [l.index, l.line]));
      for (const [index, line] of lineOf) marks.set(line, result.errors[index] ?? '');
      replace(
        errorsBox,
        result.valid
          ? h('p', { class: 'ok' }, 'Valid.')
          : h(
              'ul',
              { class: 'errors' },
              ...result.errors.map((error, index) => {
                const line = lineOf.get(index);
                return h(
                  'li',
                  { 'data-line': line },
                  line === undefined
                    ? error
                    : h(
                        'button',
                        { type: 'button', class: 'link', onclick: () => goToLine(line) },
                        `Line ${line}: ${error}`,
                      ),
                );
              }),
            ),
        ...(result.warnings ?? []).map((w) => h('p', { class: 'warn small' }, w)),
      );
      drawGutter();
      return result;
    } catch (err) {
      replace(errorsBox, errorBox(err));
      return undefined;
    }
  };
  let timer: number | undefined;
  text.addEventListener('input', () => {
    drawGutter();
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void validate(), 400);
  });
  text.addEventListener('scroll', () => {
    gutter.scrollTop = text.scrollTop;
  });
  const save = async (): Promise<void> => {
    const result = await validate();
    if (result?.valid !== true) {
      message.textContent = 'Not saved: fix the errors first.';
      return;
    }
    try {
      await api(`/dags/${seg(name)}`, { method: 'PUT', body: { spec: text.value } });
      message.textContent = 'Saved.';
      onSaved();
    } catch (err) {
      replace(message, errorBox(err));
    }
  };
  drawGutter();
  return h(
    'div',
    { class: 'yaml-editor' },
    h('label', { for: 'yaml', class: 'sr-only' }, `YAML of ${name}`),
    h('div', { class: 'editor' }, gutter, text),
    editable
      ? h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: () => void validate() }, 'Validate'),
          h('button', { type: 'button', class: 'primary', onclick: () => void save() }, 'Save'),
          message,
        )
      : h('p', { class: 'muted small' }, 'Read-only: editing needs the developer role.'),
    errorsBox,
  );
}

import { api, seg } from '../api';
import { errorBox, h, replace } from '../dom';
import type { DagDetail, ParamDef } from '../model';
import { navigate } from '../router';

/** One labelled control for a declared param (its type, enum, default and description). */
function paramField(param: ParamDef): { el: HTMLElement; read(): string | undefined } {
  const id = `param-${param.name}`;
  let control: HTMLInputElement | HTMLSelectElement;
  if (param.enum !== undefined && param.enum.length > 0) {
    control = h(
      'select',
      { id, name: param.name },
      ...param.enum.map((v) => h('option', { value: v, selected: v === param.default }, v)),
    );
  } else if (param.type === 'boolean') {
    control = h(
      'select',
      { id, name: param.name },
      ...['true', 'false'].map((v) => h('option', { value: v, selected: v === param.default }, v)),
    );
  } else {
    const numeric = param.type === 'integer' || param.type === 'number';
    control = h('input', {
      id,
      name: param.name,
      type: numeric ? 'number' : 'text',
      step: param.type === 'integer' ? 1 : numeric ? 'any' : undefined,
      value: param.default ?? undefined,
      required: param.required === true,
    });
  }
  return {
    el: h(
      'div',
      { class: 'field' },
      h('label', { for: id }, param.name, param.required === true ? ' *' : ''),
      control,
      param.description ? h('div', { class: 'muted small' }, param.description) : null,
    ),
    read: () => (control.value === '' ? undefined : control.value),
  };
}

/**
 * The start form of a DAG (operators and up): a field per declared param (dagu-model §3
 * `params`), then `POST /dags/{name}/start` with the values as a map; on success the run's page.
 */
export function startForm(dag: DagDetail): HTMLElement {
  const params = dag.dag.params ?? [];
  const fields = params.map((p) => ({ name: p.name, ...paramField(p) }));
  const message = h('div', { role: 'status' });
  const form = h(
    'form',
    { class: 'form start-form', 'aria-label': `Start ${dag.name}` },
    h('h2', {}, 'Start a run'),
    params.length === 0 ? h('p', { class: 'muted' }, 'This DAG declares no params.') : null,
    ...fields.map((f) => f.el),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Start')),
    message,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values: Record<string, string> = {};
    for (const f of fields) {
      const v = f.read();
      if (v !== undefined) values[f.name] = v;
    }
    void (async () => {
      try {
        const body = params.length === 0 ? {} : { params: values };
        const ref = await api<{ dagName: string; dagRunId: string }>(`/dags/${seg(dag.name)}/start`, {
          method: 'POST',
          body,
        });
        navigate(`/runs/${seg(ref.dagName)}/${seg(ref.dagRunId)}`);
      } catch (err) {
        replace(message, errorBox(err));
      }
    })();
  });
  return form;
}

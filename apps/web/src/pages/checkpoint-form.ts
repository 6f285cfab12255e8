import { api, seg } from '../api';
import { errorBox, h, replace } from '../dom';
import { asRole, roleAtLeast, type DagDetail, type Role, type RunDetail, type RunStep } from '../model';
import { href } from '../router';

/** A JSON Schema property as far as the form renders it (human-task forms, 036). */
interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
}

/** One labelled control per form field; its value read back by `read()`. */
function field(name: string, schema: FieldSchema, required: boolean, idPrefix: string) {
  const id = `${idPrefix}-${name}`;
  const labelText = `${schema.title ?? name}${required ? ' *' : ''}`;
  let control: HTMLInputElement | HTMLSelectElement;
  if (Array.isArray(schema.enum)) {
    control = h(
      'select',
      { id, name, required },
      ...schema.enum.map((v) =>
        h('option', { value: JSON.stringify(v).replace(/^"|"$/g, '') }, JSON.stringify(v).replace(/^"|"$/g, '')),
      ),
    );
  } else if (schema.type === 'boolean') {
    control = h('input', { id, name, type: 'checkbox', checked: schema.default === true });
  } else {
    const numeric = schema.type === 'number' || schema.type === 'integer';
    control = h('input', {
      id,
      name,
      type: numeric ? 'number' : 'text',
      step: schema.type === 'integer' ? 1 : numeric ? 'any' : undefined,
      required,
      value:
        typeof schema.default === 'string' || typeof schema.default === 'number' ? String(schema.default) : undefined,
    });
  }
  const read = (): unknown => {
    if (control instanceof HTMLInputElement && control.type === 'checkbox') return control.checked;
    if (control.value === '') return undefined;
    return schema.type === 'number' || schema.type === 'integer' ? Number(control.value) : control.value;
  };
  const el = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, labelText),
    control,
    schema.description ? h('div', { class: 'muted small' }, schema.description) : null,
  );
  return { el, read };
}

/**
 * The form of a waiting checkpoint on the run page: an approval gate
 * (its `input` fields; Approve / Reject) or a human task (its form from the task's JSON
 * Schema; Complete). Only for a role at least the step's `answer.role`; others see who may decide.
 */
export function checkpointForm(
  run: RunDetail,
  step: RunStep,
  dag: DagDetail | undefined,
  role: Role,
  done: () => Promise<void>,
): HTMLElement {
  const def = dag?.dag.steps?.find((s) => s.name === step.name);
  const needed = asRole(step.answer?.role, 'operator');
  const path = `/dag-runs/${seg(run.name)}/${seg(run.dagRunId)}/steps/${seg(step.name)}`;
  const box = h('section', { class: 'checkpoint', 'aria-label': `Checkpoint ${step.name}` });
  const approval = step.approval ?? def?.approval;
  const isApproval = approval !== undefined || (step.answer?.path ?? '').endsWith('/approval');
  const prompt = approval?.prompt ?? def?.action?.prompt;
  box.append(h('h2', {}, `${isApproval ? 'Approval' : 'Human task'}: ${step.name}`));
  if (prompt) box.append(h('p', {}, prompt));
  if (!roleAtLeast(role, needed)) {
    box.append(h('p', { class: 'muted' }, `Waiting for a decision by a ${needed} or higher.`));
    return box;
  }
  const message = h('div', { role: 'status' });
  const form = h('form', { class: 'form' });
  const send = async (body: unknown, kind: 'approval' | 'human-task'): Promise<void> => {
    try {
      await api(`${path}/${kind}`, { method: 'POST', body });
      replace(message, h('p', {}, 'Decision sent; the run continues.'));
      await done();
    } catch (err) {
      replace(message, errorBox(err));
    }
  };
  if (isApproval) {
    const names = approval?.input ?? [];
    const inputs = names.map((name) =>
      field(name, { type: 'string' }, approval?.required?.includes(name) === true, `ap-${step.name}`),
    );
    const values = (): Record<string, string> =>
      Object.fromEntries(
        names.flatMap((name, i) => {
          const v = inputs[i]?.read();
          return typeof v === 'string' ? [[name, v]] : [];
        }),
      );
    form.append(
      ...inputs.map((i) => i.el),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Approve'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => void send({ decision: 'reject', input: values() }, 'approval'),
          },
          'Reject',
        ),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void send({ decision: 'approve', input: values() }, 'approval');
    });
  } else {
    const schema = (def?.action?.form ?? {}) as { properties?: Record<string, FieldSchema>; required?: string[] };
    const fields = Object.entries(schema.properties ?? {}).map(([name, s]) => ({
      name,
      ...field(name, s, (schema.required ?? []).includes(name), `ht-${step.name}`),
    }));
    form.append(
      ...fields.map((f) => f.el),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Complete')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const values = Object.fromEntries(
        fields.flatMap((f) => {
          const v = f.read();
          return v === undefined ? [] : [[f.name, v]];
        }),
      );
      void send({ values }, 'human-task');
    });
  }
  box.append(
    form,
    message,
    h('p', { class: 'small muted' }, h('a', { href: href(`/runs/${seg(run.name)}/${seg(run.dagRunId)}`) }, 'Run page')),
  );
  return box;
}

import { api } from '../api';
import { errorBox, h, replace } from '../dom';
import { listenToRuns } from '../live';
import { RUN_STATUS_LABELS, type RunSummary } from '../model';
import { navigate, type PageView } from '../router';
import { runTable } from './run-table';

/**
 * Runs across DAGs: filtered by status, DAG and time (`GET /dag-runs` with
 * `status`, `name`, `fromDate`, `toDate`), kept in the address so a filter can be shared;
 * reloaded on run events.
 */
export async function runListPage(query: URLSearchParams): Promise<PageView> {
  const status = h(
    'select',
    { id: 'f-status', name: 'status' },
    h('option', { value: '' }, 'any'),
    ...RUN_STATUS_LABELS.map((s) =>
      h('option', { value: s, selected: query.get('status') === s }, s.replace(/_/g, ' ')),
    ),
  );
  const dag = h('input', { id: 'f-dag', name: 'name', type: 'search', value: query.get('name') ?? '' });
  const from = h('input', {
    id: 'f-from',
    name: 'fromDate',
    type: 'datetime-local',
    value: query.get('fromDate') ?? '',
  });
  const to = h('input', { id: 'f-to', name: 'toDate', type: 'datetime-local', value: query.get('toDate') ?? '' });
  const results = h('div', {});
  const load = async (): Promise<void> => {
    const q = new URLSearchParams({ limit: '100' });
    if (status.value) q.set('status', status.value);
    if (dag.value.trim()) q.set('name', dag.value.trim());
    if (from.value) q.set('fromDate', new Date(from.value).toISOString());
    if (to.value) q.set('toDate', new Date(to.value).toISOString());
    try {
      const page = await api<{ items: RunSummary[] }>(`/dag-runs?${q.toString()}`);
      replace(results, runTable(page.items, true));
    } catch (err) {
      replace(results, errorBox(err));
    }
  };
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h('label', { for: 'f-status' }, 'Status'),
    status,
    h('label', { for: 'f-dag' }, 'DAG'),
    dag,
    h('label', { for: 'f-from' }, 'From'),
    from,
    h('label', { for: 'f-to' }, 'To'),
    to,
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const q = new URLSearchParams();
    for (const c of [status, dag, from, to]) if (c.value) q.set(c.name, c.value);
    navigate(`/runs${q.size > 0 ? `?${q.toString()}` : ''}`, true);
  });
  await load();
  let timer: number | undefined;
  const stop = listenToRuns({}, () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void load(), 300);
  });
  return {
    el: h('section', {}, h('h1', {}, 'Runs'), form, results),
    dispose: () => {
      stop();
      window.clearTimeout(timer);
    },
  };
}

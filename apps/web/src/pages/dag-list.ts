import { api, seg } from '../api';
import { h, replace, when } from '../dom';
import { listenToRuns } from '../live';
import type { DagSummary, Role, RunSummary } from '../model';
import { href, type PageView } from '../router';
import { badge } from '../status';

/** The last run of each DAG of the page: one `GET /dag-runs?name=<dag>&limit=1` each, at most 8 at a time. */
async function lastRuns(names: readonly string[]): Promise<Map<string, RunSummary>> {
  const out = new Map<string, RunSummary>();
  const queue = [...names];
  const worker = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const page = await api<{ items: RunSummary[] }>(`/dag-runs?name=${seg(name)}&limit=1`);
      const last = page.items.find((r) => r.name === name);
      if (last) out.set(name, last);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

/**
 * The DAG list: search by name, filter by a label, schedule and next run,
 * last run status (updated live from run events).
 */
export async function dagListPage(_role: Role): Promise<PageView> {
  const search = h('input', { type: 'search', id: 'dag-search', placeholder: 'Filter by name', autocomplete: 'off' });
  const label = h('input', {
    type: 'search',
    id: 'dag-label',
    placeholder: 'label, e.g. team=ops',
    autocomplete: 'off',
  });
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'list' },
    h('caption', { class: 'sr-only' }, 'DAGs'),
    h(
      'thead',
      {},
      h('tr', {}, ...['Name', 'Labels', 'Schedule', 'Next run', 'Last run'].map((t) => h('th', { scope: 'col' }, t))),
    ),
    body,
  );
  const statusCells = new Map<string, HTMLElement>();
  const load = async (): Promise<void> => {
    const query = new URLSearchParams({ perPage: '100' });
    if (search.value.trim() !== '') query.set('name', search.value.trim());
    if (label.value.trim() !== '') query.set('labels', label.value.trim());
    const list = await api<{ items: DagSummary[] }>(`/dags?${query.toString()}`);
    statusCells.clear();
    replace(
      body,
      ...list.items.map((dag) => {
        const cell = h('td', { 'data-label': 'Last run' }, '…');
        statusCells.set(dag.name, cell);
        return h(
          'tr',
          {},
          h(
            'td',
            { 'data-label': 'Name' },
            h('a', { href: href(`/dags/${seg(dag.name)}`) }, dag.name),
            dag.suspended ? h('span', { class: 'tag' }, 'suspended') : null,
            dag.description ? h('div', { class: 'muted small' }, dag.description) : null,
          ),
          h(
            'td',
            { 'data-label': 'Labels' },
            ...dag.labels.map((l) =>
              h('button', { type: 'button', class: 'chip', onclick: () => void filterLabel(l) }, l),
            ),
          ),
          h('td', { 'data-label': 'Schedule' }, dag.schedule.length > 0 ? h('code', {}, dag.schedule.join(', ')) : '—'),
          h('td', { 'data-label': 'Next run' }, when(dag.nextRun)),
          cell,
        );
      }),
    );
    if (list.items.length === 0) replace(body, h('tr', {}, h('td', { colspan: 5 }, 'No DAGs match.')));
    const runs = await lastRuns(list.items.map((d) => d.name));
    for (const [name, cell] of statusCells) showLast(cell, name, runs.get(name));
  };
  const showLast = (cell: HTMLElement, name: string, run: RunSummary | undefined): void => {
    if (!run) return replace(cell, '—');
    replace(
      cell,
      h('a', { href: href(`/runs/${seg(name)}/${seg(run.dagRunId)}`), class: 'run-link' }, badge(run.statusLabel)),
      h('span', { class: 'muted small' }, ` ${when(run.startedAt)}`),
    );
  };
  const filterLabel = async (value: string): Promise<void> => {
    label.value = value;
    await load();
  };
  let timer: number | undefined;
  const later = (): void => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void load(), 250);
  };
  search.addEventListener('input', later);
  label.addEventListener('input', later);
  await load();
  const stop = listenToRuns({}, (event) => {
    const cell = statusCells.get(event.name);
    if (cell)
      showLast(cell, event.name, {
        name: event.name,
        dagRunId: event.dagRunId,
        status: event.status,
        statusLabel: event.statusLabel,
        startedAt: event.at,
      });
  });
  const el = h(
    'section',
    {},
    h('h1', {}, 'DAGs'),
    h(
      'div',
      { class: 'filters' },
      h('label', { for: 'dag-search' }, 'Name'),
      search,
      h('label', { for: 'dag-label' }, 'Label'),
      label,
    ),
    h('div', { class: 'table-wrap' }, table),
  );
  return { el, dispose: stop };
}

import { seg } from '../api';
import { duration, h, when } from '../dom';
import type { RunSummary } from '../model';
import { href } from '../router';
import { badge } from '../status';

/** A table of runs (DAG page history, runs list): status, DAG, run id linking to its page, times. */
export function runTable(runs: readonly RunSummary[], showDag: boolean): HTMLElement {
  if (runs.length === 0) return h('p', { class: 'muted' }, 'No runs.');
  const cols = [...(showDag ? ['DAG'] : []), 'Status', 'Run', 'Started', 'Duration'];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'list runs' },
      h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        ...runs.map((run) =>
          h(
            'tr',
            { 'data-run': run.dagRunId },
            showDag
              ? h('td', { 'data-label': 'DAG' }, h('a', { href: href(`/dags/${seg(run.name)}`) }, run.name))
              : null,
            h('td', { 'data-label': 'Status' }, badge(run.statusLabel)),
            h(
              'td',
              { 'data-label': 'Run' },
              h('a', { href: href(`/runs/${seg(run.name)}/${seg(run.dagRunId)}`) }, h('code', {}, run.dagRunId)),
            ),
            h('td', { 'data-label': 'Started' }, when(run.startedAt)),
            h('td', { 'data-label': 'Duration' }, duration(run.startedAt, run.finishedAt)),
          ),
        ),
      ),
    ),
  );
}

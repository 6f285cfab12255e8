import { api, seg } from '../api';
import { duration, errorBox, h, replace } from '../dom';
import { badge } from '../status';

/** One entry of the foreach-items model (021): the item's path, index, key and status. */
interface ForeachItem {
  item: string;
  index: number;
  key: string;
  status: number;
  statusLabel: string;
  error?: string;
  startedAt?: string;
  finishedAt?: string;
}

interface ForeachItems {
  total: number;
  counts: { notStarted: number; running: number; succeeded: number; failed: number; aborted: number };
  items: ForeachItem[];
}

interface ForeachItemDetail extends ForeachItem {
  steps: Array<{ name: string; status: number; statusLabel: string; hasStdout: boolean; hasStderr: boolean }>;
}

/** Items listed per page: the foreach-items model allows 500 (021); a step has at most 1000 (dagu-model §3). */
const PER_PAGE = 200;

/**
 * The foreach drill-down of the run page: a foreach step's items with their
 * status (failed and running first, as the foreach-items model orders them), counts by status,
 * and, for an opened item, its body steps — each opens its log in the log panel (`onLog`).
 * `runPath` is the run's REST path (a child run's `…/sub/{id}` too).
 */
export function foreachPanel(
  runPath: string,
  step: string,
  onLog: (item: string, body: string, label: string) => void,
): { el: HTMLElement; refresh(): void } {
  const list = h('div', {});
  const detail = h('div', { class: 'foreach-item' });
  let opened: string | undefined;
  const base = `${runPath}/steps/${seg(step)}/items`;

  const openItem = async (item: string): Promise<void> => {
    opened = item;
    try {
      const got = await api<ForeachItemDetail>(`${base}/${seg(item)}`);
      if (opened !== item) return;
      const label = got.key !== '' ? got.key : got.item;
      replace(
        detail,
        h('h4', {}, `Item ${label}`, ' ', badge(got.statusLabel)),
        got.error ? h('div', { class: 'step-error' }, got.error) : null,
        h(
          'ul',
          { class: 'plain', 'aria-label': `Body steps of item ${got.item}` },
          ...got.steps.map((s) =>
            h(
              'li',
              {},
              h(
                'button',
                { type: 'button', class: 'link', onclick: () => onLog(got.item, s.name, label) },
                `${s.name}`,
              ),
              ' ',
              badge(s.statusLabel),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(detail, errorBox(err));
    }
  };
  const load = async (): Promise<void> => {
    try {
      const got = await api<ForeachItems>(`${base}?perPage=${PER_PAGE}`);
      const c = got.counts;
      replace(
        list,
        h(
          'p',
          { class: 'small' },
          `${got.total} items: ${c.succeeded} succeeded, ${c.failed} failed, ${c.running} running, ` +
            `${c.notStarted} not started, ${c.aborted} aborted`,
          got.total > got.items.length ? ` (first ${got.items.length} shown)` : '',
        ),
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list items' },
            h('caption', { class: 'sr-only' }, `Items of ${step}`),
            h(
              'thead',
              {},
              h('tr', {}, ...['Item', 'Key', 'Status', 'Duration'].map((t) => h('th', { scope: 'col' }, t))),
            ),
            h(
              'tbody',
              {},
              ...got.items.map((item) =>
                h(
                  'tr',
                  { 'data-item': item.item },
                  h(
                    'td',
                    { 'data-label': 'Item' },
                    h(
                      'button',
                      { type: 'button', class: 'link', onclick: () => void openItem(item.item) },
                      `#${item.index}`,
                    ),
                  ),
                  h('td', { 'data-label': 'Key' }, item.key),
                  h('td', { 'data-label': 'Status' }, badge(item.statusLabel)),
                  h('td', { 'data-label': 'Duration' }, duration(item.startedAt, item.finishedAt)),
                ),
              ),
            ),
          ),
        ),
      );
      if (opened !== undefined) void openItem(opened);
    } catch (err) {
      replace(list, errorBox(err));
    }
  };
  void load();
  return {
    el: h(
      'section',
      { class: 'foreach', 'aria-label': `Foreach items of ${step}` },
      h('h3', {}, `Items of ${step}`),
      list,
      detail,
    ),
    refresh: () => void load(),
  };
}

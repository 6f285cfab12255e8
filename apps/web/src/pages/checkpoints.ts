import { api, seg } from '../api';
import { h, replace } from '../dom';
import { listenToRuns } from '../live';
import { asRole, roleAtLeast, type Role, type RunDetail, type RunSummary } from '../model';
import { href, type PageView } from '../router';

/**
 * Checkpoints: the runs waiting at a human task or an approval gate, each waiting
 * step with who may decide it; the decision is made on the run page, where its form is.
 */
export async function checkpointsPage(role: Role): Promise<PageView> {
  const list = h('div', {});
  const load = async (): Promise<void> => {
    const page = await api<{ items: RunSummary[] }>('/dag-runs?status=waiting&limit=100');
    const details = await Promise.all(
      page.items.map((r) => api<RunDetail>(`/dag-runs/${seg(r.name)}/${seg(r.dagRunId)}`).catch(() => undefined)),
    );
    const rows = details.flatMap((run) =>
      run === undefined
        ? []
        : run.steps.filter((s) => s.status === 7 && s.answer !== undefined).map((s) => ({ run, step: s })),
    );
    replace(
      list,
      rows.length === 0
        ? h('p', { class: 'muted' }, 'Nothing is waiting for a decision.')
        : h(
            'ul',
            { class: 'cards' },
            ...rows.map(({ run, step }) => {
              const needed = asRole(step.answer?.role, 'operator');
              return h(
                'li',
                { class: 'card' },
                h('a', { href: href(`/runs/${seg(run.name)}/${seg(run.dagRunId)}`) }, `${run.name} · ${step.name}`),
                h('div', { class: 'small muted' }, `run ${run.dagRunId}`),
                h('div', { class: 'small' }, roleAtLeast(role, needed) ? 'You may decide.' : `Needs a ${needed}.`),
              );
            }),
          ),
    );
  };
  await load();
  const stop = listenToRuns({}, () => void load());
  return { el: h('section', {}, h('h1', {}, 'Checkpoints'), list), dispose: stop };
}

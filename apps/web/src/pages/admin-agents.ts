import type { Agent as ContractAgent, StoredBinding } from '@dagu-mcp/contracts';
import { api, seg } from '../api';
import { errorBox, h, replace, when } from '../dom';
import { roleAtLeast, type Role } from '../model';
import { href, navigate, type PageView } from '../router';
import { adminNav, needsManager } from './admin-nav';

/** An agent as `GET /workspaces/{ws}/agents` lists it: the contracts' agent, plus `endpoint`. */
type Agent = ContractAgent & { endpoint: string };

/** One catalog binding as stored. */
type Binding = StoredBinding;

/** A Dagu tool's restrictions in words (`targets: dags, runs; …`), `—` for none. */
function restrictions(b: Extract<Binding, { kind: 'dagu_tool' }>): string {
  const parts = Object.entries(b.restrictions).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`);
  return parts.length === 0 ? '—' : parts.join('; ');
}

/** What a binding binds, in words: the Binds column. */
function bindsOf(b: Binding): string {
  switch (b.kind) {
    case 'dag':
      return `DAG ${b.dag}`;
    case 'rest_operation':
      return `REST operation ${b.operation}`;
    case 'extension_tool':
      return `extension tool ${b.service}.${b.tool}`;
    case 'dagu_tool':
      return `Dagu tool ${b.tool}`;
  }
}

/** The binding's limits in words: the Limits column. */
function limitsOf(b: Binding): string {
  switch (b.kind) {
    case 'dag':
      return `waits ${b.waitSeconds ?? 60} s`;
    case 'rest_operation':
      return b.version === undefined || b.version === 'latest' ? 'latest published version' : `version ${b.version}`;
    case 'extension_tool':
      return "the tool's own minimum role";
    case 'dagu_tool':
      return restrictions(b);
  }
}

interface AgentKey {
  id: string;
  prefix: string;
  name: string;
  expiresAt: string | null;
  createdAt: string;
  createdBy?: string;
  lastUsedAt?: string | null;
}

/** `GET …/agents/{agent}/usage?from=&to=`: calls per tool over the window, latencies in ms. */
export interface AgentUsage {
  from: string;
  to: string;
  tools: Array<{
    tool: string;
    calls: number;
    errors: number;
    p50Ms: number | null;
    p95Ms: number | null;
    p99Ms: number | null;
  }>;
}

const STATES = ['draft', 'published', 'disabled'] as const;
const WORKSPACE = /^[A-Za-z0-9_.-]{1,40}$/;
const LAST_WORKSPACE = 'dagu.console.agentWorkspace';

function agentPath(ws: string, slug: string): string {
  return `/workspaces/${seg(ws)}/agents/${seg(slug)}`;
}

/** The workspace last looked at (this browser), else `default`. */
function rememberedWorkspace(): string {
  try {
    return localStorage.getItem(LAST_WORKSPACE) ?? 'default';
  } catch {
    return 'default';
  }
}

/**
 * Published agents of a workspace: each agent's state,
 * catalog size and endpoint, linking to its page. Manager and up (dagu-model §9: the agent
 * routes are manager-only); lower roles get a refusal and no data.
 */
export async function agentsPage(role: Role, query: URLSearchParams): Promise<PageView> {
  if (!roleAtLeast(role, 'manager')) return needsManager('Agents');
  const asked = query.get('workspace') ?? rememberedWorkspace();
  const workspace = h('input', {
    id: 'agents-ws',
    name: 'workspace',
    value: asked,
    required: true,
    pattern: '[A-Za-z0-9_.\\-]{1,40}',
    autocomplete: 'off',
  });
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h('label', { for: 'agents-ws' }, 'Workspace'),
    workspace,
    h('button', { type: 'submit' }, 'Show agents'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    navigate(`/admin/agents?workspace=${encodeURIComponent(workspace.value.trim())}`);
  });
  const results = h('div', {});
  if (WORKSPACE.test(asked)) {
    try {
      localStorage.setItem(LAST_WORKSPACE, asked);
    } catch {
      // private windows may refuse storage; the field keeps the value
    }
    try {
      const reply = await api<{ items: Agent[] }>(`/workspaces/${seg(asked)}/agents`);
      replace(
        results,
        reply.items.length === 0
          ? h('p', { class: 'muted' }, `No agents in ${asked}.`)
          : h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'list agents' },
                h('caption', { class: 'sr-only' }, `Agents of ${asked}`),
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ...['Agent', 'State', 'Tools', 'Endpoint', 'Updated'].map((t) => h('th', { scope: 'col' }, t)),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  ...reply.items.map((a) =>
                    h(
                      'tr',
                      {},
                      h(
                        'td',
                        { 'data-label': 'Agent' },
                        h('a', { href: href(`/admin/agents/${seg(a.workspace)}/${seg(a.slug)}`) }, a.title),
                        ' ',
                        h('code', { class: 'small' }, a.slug),
                      ),
                      h('td', { 'data-label': 'State' }, h('span', { class: `chip state-${a.state}` }, a.state)),
                      h('td', { 'data-label': 'Tools' }, String(a.toolCount)),
                      h('td', { 'data-label': 'Endpoint' }, a.state === 'published' ? h('code', {}, a.endpoint) : '—'),
                      h('td', { 'data-label': 'Updated' }, when(a.updatedAt)),
                    ),
                  ),
                ),
              ),
            ),
      );
    } catch (err) {
      replace(results, errorBox(err));
    }
  } else
    replace(results, h('p', { class: 'error', role: 'alert' }, 'A workspace name is letters, digits, ., _ and -.'));
  return {
    el: h('section', { class: 'admin' }, adminNav(role, '/admin/agents'), h('h1', {}, 'Agents'), form, results),
  };
}

/** The catalog: one row per tool the agent publishes (read-only here; `PUT …/tools` changes it). */
function catalog(tools: readonly Binding[]): HTMLElement {
  if (tools.length === 0) return h('p', { class: 'muted' }, 'The catalog is empty: the agent publishes no tool.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'list catalog' },
      h('caption', { class: 'sr-only' }, 'Catalog bindings'),
      h('thead', {}, h('tr', {}, ...['Tool', 'Binds', 'Limits', 'Bound by'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        ...tools.map((b) =>
          h(
            'tr',
            {},
            h('td', { 'data-label': 'Tool' }, h('code', {}, b.toolName), b.title ? ` ${b.title}` : ''),
            h('td', { 'data-label': 'Binds' }, bindsOf(b)),
            h('td', { 'data-label': 'Limits' }, limitsOf(b)),
            h('td', { 'data-label': 'Bound by' }, b.createdBy?.subject ?? '—'),
          ),
        ),
      ),
    ),
  );
}

/** Formats a latency (ms) or `—`. */
function ms(value: number | null): string {
  return value === null ? '—' : value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/**
 * The usage panel: calls, errors and latency percentiles per tool over a window (default the
 * last 24 hours). A gateway without the usage route (404) says so instead of failing the page.
 */
function usagePanel(ws: string, slug: string): HTMLElement {
  const hours = h(
    'select',
    { id: 'usage-window', name: 'window' },
    ...[
      ['1', 'last hour'],
      ['24', 'last 24 hours'],
      ['168', 'last 7 days'],
      ['720', 'last 30 days'],
    ].map(([v, label]) => h('option', { value: v ?? '', selected: v === '24' }, label ?? '')),
  );
  const out = h('div', { 'aria-live': 'polite' });
  const load = async (): Promise<void> => {
    const to = new Date();
    const from = new Date(to.getTime() - Number(hours.value) * 3_600_000);
    const q = new URLSearchParams({ from: from.toISOString(), to: to.toISOString() });
    try {
      const usage = await api<AgentUsage>(`${agentPath(ws, slug)}/usage?${q.toString()}`);
      replace(
        out,
        usage.tools.length === 0
          ? h('p', { class: 'muted' }, 'No calls in this window.')
          : h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'list usage' },
                h('caption', { class: 'sr-only' }, `Usage from ${when(usage.from)} to ${when(usage.to)}`),
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ...['Tool', 'Calls', 'Errors', 'p50', 'p95', 'p99'].map((t) => h('th', { scope: 'col' }, t)),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  ...usage.tools.map((t) =>
                    h(
                      'tr',
                      {},
                      h('td', { 'data-label': 'Tool' }, h('code', {}, t.tool)),
                      h('td', { 'data-label': 'Calls', class: 'num' }, String(t.calls)),
                      h('td', { 'data-label': 'Errors', class: 'num' }, String(t.errors)),
                      h('td', { 'data-label': 'p50', class: 'num' }, ms(t.p50Ms)),
                      h('td', { 'data-label': 'p95', class: 'num' }, ms(t.p95Ms)),
                      h('td', { 'data-label': 'p99', class: 'num' }, ms(t.p99Ms)),
                    ),
                  ),
                ),
              ),
            ),
      );
    } catch (err) {
      replace(out, errorBox(err));
    }
  };
  hours.addEventListener('change', () => void load());
  void load();
  return h(
    'section',
    { 'aria-labelledby': 'usage-h' },
    h('h2', { id: 'usage-h' }, 'Usage'),
    h('div', { class: 'filters' }, h('label', { for: 'usage-window' }, 'Window'), hours),
    out,
  );
}

/** Keys of the agent: list, revoke, create — a new key is shown once, here, and never again. */
function keysPanel(ws: string, slug: string): HTMLElement {
  const body = h('tbody');
  const message = h('div', { role: 'status' });
  const load = async (): Promise<void> => {
    try {
      const reply = await api<{ items: AgentKey[] }>(`${agentPath(ws, slug)}/keys`);
      replace(
        body,
        ...(reply.items.length === 0
          ? [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No live keys.'))]
          : reply.items.map((k) =>
              h(
                'tr',
                { 'data-key': k.id },
                h('td', { 'data-label': 'Name' }, k.name),
                h('td', { 'data-label': 'Prefix' }, h('code', {}, k.prefix)),
                h('td', { 'data-label': 'Created' }, when(k.createdAt)),
                h('td', { 'data-label': 'Last used' }, when(k.lastUsedAt ?? undefined)),
                h('td', { 'data-label': 'Expires' }, k.expiresAt === null ? 'never' : when(k.expiresAt)),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger small',
                      'aria-label': `Revoke key ${k.name}`,
                      onclick: () => {
                        if (!window.confirm(`Revoke the key ${k.name}? Clients using it stop at once.`)) return;
                        void api(`${agentPath(ws, slug)}/keys/${seg(k.id)}`, { method: 'DELETE' })
                          .then(async () => {
                            replace(message, `Key ${k.name} revoked.`);
                            await load();
                          })
                          .catch((err: unknown) => replace(message, errorBox(err)));
                      },
                    },
                    'Revoke',
                  ),
                ),
              ),
            )),
      );
    } catch (err) {
      replace(message, errorBox(err));
    }
  };
  const name = h('input', { id: 'agent-key-name', name: 'name', required: true, maxlength: 100, autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'filters' },
    h('label', { for: 'agent-key-name' }, 'New key name'),
    name,
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void api<{ key: string; name: string; endpoint: string }>(`${agentPath(ws, slug)}/keys`, {
      method: 'POST',
      body: { name: name.value.trim() },
    })
      .then(async (created) => {
        const secret = h('code', { class: 'secret', tabindex: 0 }, created.key);
        replace(
          message,
          h(
            'div',
            { class: 'once' },
            h('p', {}, `Key ${created.name} created. Copy it now: it is shown only once.`),
            secret,
            h('p', { class: 'small' }, 'Endpoint: ', h('code', {}, created.endpoint)),
          ),
        );
        form.reset();
        secret.focus();
        await load();
      })
      .catch((err: unknown) => replace(message, errorBox(err)));
  });
  void load();
  return h(
    'section',
    { 'aria-labelledby': 'keys-h' },
    h('h2', { id: 'keys-h' }, 'Keys'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'list keys' },
        h('caption', { class: 'sr-only' }, 'Live keys of the agent'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Name', 'Prefix', 'Created', 'Last used', 'Expires', ''].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        body,
      ),
    ),
    form,
    message,
  );
}

/**
 * One agent: title, state (change it: draft, published,
 * disabled), endpoint, its catalog, its keys (a new key shown once; revoke) and its usage.
 * Manager and up.
 */
export async function agentPage(role: Role, ws: string, slug: string): Promise<PageView> {
  if (!roleAtLeast(role, 'manager')) return needsManager('Agents');
  const agent = await api<Agent & { tools: Binding[] }>(agentPath(ws, slug));
  const state = h(
    'select',
    { id: 'agent-state', name: 'state' },
    ...STATES.map((s) => h('option', { value: s, selected: s === agent.state }, s)),
  );
  const stateMessage = h('span', { role: 'status', class: 'small' });
  const stateForm = h(
    'form',
    { class: 'filters' },
    h('label', { for: 'agent-state' }, 'State'),
    state,
    h('button', { type: 'submit' }, 'Save state'),
    stateMessage,
  );
  stateForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void api<Agent>(agentPath(ws, slug), { method: 'PATCH', body: { state: state.value } })
      .then((updated) => replace(stateMessage, `State is now ${updated.state}.`))
      .catch((err: unknown) => replace(stateMessage, errorBox(err)));
  });
  const el = h(
    'section',
    { class: 'admin agent-page' },
    adminNav(role, '/admin/agents'),
    h(
      'nav',
      { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: href(`/admin/agents?workspace=${encodeURIComponent(ws)}`) }, `↑ agents of ${ws}`),
    ),
    h('h1', {}, agent.title, ' ', h('code', { class: 'muted small' }, `${ws}/${slug}`)),
    agent.description ? h('p', {}, agent.description) : null,
    h(
      'div',
      { class: 'facts' },
      h('span', {}, h('strong', {}, 'Endpoint '), h('code', {}, agent.endpoint)),
      h('span', {}, h('strong', {}, 'Version '), String(agent.version)),
      h('span', {}, h('strong', {}, 'Updated '), when(agent.updatedAt)),
    ),
    stateForm,
    h('h2', {}, 'Catalog'),
    catalog(agent.tools),
    keysPanel(ws, slug),
    usagePanel(ws, slug),
  );
  return { el };
}

import { api, seg } from '../api';
import { errorBox, h, replace, when } from '../dom';
import type { Role } from '../model';
import type { PageView } from '../router';
import { agentsPage } from './admin-agents';
import { adminNav, needsManager } from './admin-nav';

interface User {
  id: string;
  username: string;
  role: Role;
  createdAt?: string;
}
interface ApiKey {
  id: string;
  name: string;
  role: Role;
  surfaces?: string[];
  createdAt?: string;
  expiresAt?: string;
  lastUsedAt?: string;
}
interface AuditRow {
  at?: string;
  createdAt?: string;
  category?: string;
  action?: string;
  outcome?: string;
  actor?: string | { name?: string };
  credentialType?: string;
  /** The person a published agent acted for. */
  onBehalfOf?: { name?: string };
  [key: string]: unknown;
}

/** An audit row's actor as shown: the agent, then the person it acted for, and the credential type. */
function auditActor(r: AuditRow): string {
  const actor = typeof r.actor === 'string' ? r.actor : (r.actor?.name ?? '');
  const person = r.onBehalfOf?.name === undefined ? '' : ` for ${r.onBehalfOf.name}`;
  return `${actor}${person}${r.credentialType === undefined ? '' : ` (${r.credentialType})`}`;
}

const ROLES: Role[] = ['viewer', 'operator', 'developer', 'manager', 'admin'];

function roleSelect(id: string, value: Role = 'viewer'): HTMLSelectElement {
  return h('select', { id, name: 'role' }, ...ROLES.map((r) => h('option', { value: r, selected: r === value }, r)));
}

/** Users and their roles: list, create, change a role (admin; the REST routes are admin-only). */
async function usersSection(): Promise<HTMLElement> {
  const body = h('tbody');
  const load = async (): Promise<void> => {
    const reply = await api<{ items?: User[]; users?: User[] } | User[]>('/users');
    const users = Array.isArray(reply) ? reply : (reply.items ?? reply.users ?? []);
    replace(
      body,
      ...users.map((u) => {
        const select = roleSelect(`role-${u.id}`, u.role);
        select.setAttribute('aria-label', `Role of ${u.username}`);
        select.addEventListener(
          'change',
          () => void api(`/users/${seg(u.id)}`, { method: 'PATCH', body: { role: select.value } }).then(load),
        );
        return h(
          'tr',
          {},
          h('td', { 'data-label': 'User' }, u.username),
          h('td', { 'data-label': 'Role' }, select),
          h('td', { 'data-label': 'Created' }, when(u.createdAt)),
        );
      }),
    );
  };
  const username = h('input', { id: 'new-user', name: 'username', required: true, autocomplete: 'off' });
  const password = h('input', {
    id: 'new-password',
    name: 'password',
    type: 'password',
    required: true,
    minlength: 8,
    autocomplete: 'new-password',
  });
  const role = roleSelect('new-role');
  const message = h('div', { role: 'status' });
  const form = h(
    'form',
    { class: 'filters' },
    h('label', { for: 'new-user' }, 'Username'),
    username,
    h('label', { for: 'new-password' }, 'Password'),
    password,
    h('label', { for: 'new-role' }, 'Role'),
    role,
    h('button', { type: 'submit' }, 'Add user'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void api('/users', {
      method: 'POST',
      body: { username: username.value, password: password.value, role: role.value },
    })
      .then(async () => {
        form.reset();
        replace(message, 'User added.');
        await load();
      })
      .catch((err: unknown) => replace(message, errorBox(err)));
  });
  await load();
  return h(
    'section',
    {},
    h('h2', {}, 'Users'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'list' },
        h('thead', {}, h('tr', {}, h('th', {}, 'User'), h('th', {}, 'Role'), h('th', {}, 'Created'))),
        body,
      ),
    ),
    form,
    message,
  );
}

/** API keys: list, revoke, create — a new key's secret is shown once, here, and never again. */
async function keysSection(): Promise<HTMLElement> {
  const body = h('tbody');
  const load = async (): Promise<void> => {
    const reply = await api<{ items?: ApiKey[] } | ApiKey[]>('/api-keys');
    const keys = Array.isArray(reply) ? reply : (reply.items ?? []);
    replace(
      body,
      ...keys.map((k) =>
        h(
          'tr',
          {},
          h('td', { 'data-label': 'Name' }, k.name),
          h('td', { 'data-label': 'Role' }, k.role),
          h('td', { 'data-label': 'Surfaces' }, (k.surfaces ?? []).join(', ')),
          h('td', { 'data-label': 'Created' }, when(k.createdAt)),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'danger small',
                onclick: () => void api(`/api-keys/${seg(k.id)}`, { method: 'DELETE' }).then(load),
              },
              `Revoke ${k.name}`,
            ),
          ),
        ),
      ),
    );
  };
  const name = h('input', { id: 'key-name', name: 'name', required: true, autocomplete: 'off' });
  const role = roleSelect('key-role');
  const shown = h('div', { role: 'status' });
  const form = h(
    'form',
    { class: 'filters' },
    h('label', { for: 'key-name' }, 'Name'),
    name,
    h('label', { for: 'key-role' }, 'Role'),
    role,
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void api<{ key?: string; secret?: string; token?: string }>('/api-keys', {
      method: 'POST',
      body: { name: name.value, role: role.value },
    })
      .then(async (created) => {
        const secret = created.key ?? created.secret ?? created.token ?? '';
        replace(
          shown,
          h(
            'div',
            { class: 'once' },
            h('p', {}, 'Copy this key now: it is shown only once.'),
            h('code', { class: 'secret' }, secret),
          ),
        );
        form.reset();
        await load();
      })
      .catch((err: unknown) => replace(shown, errorBox(err)));
  });
  await load();
  return h(
    'section',
    {},
    h('h2', {}, 'API keys'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'list' },
        h('thead', {}, h('tr', {}, ...['Name', 'Role', 'Surfaces', 'Created', ''].map((t) => h('th', {}, t)))),
        body,
      ),
    ),
    form,
    shown,
  );
}

/** The audit-log search: filters by actor, action and outcome (`GET /audit`). */
function auditSection(): HTMLElement {
  const actor = h('input', { id: 'au-actor', name: 'actor', type: 'search' });
  const action = h('input', { id: 'au-action', name: 'action', type: 'search' });
  const outcome = h(
    'select',
    { id: 'au-outcome', name: 'outcome' },
    ...['', 'succeeded', 'failed', 'denied', 'received'].map((o) => h('option', { value: o }, o || 'any')),
  );
  const results = h('div', {});
  const search = async (): Promise<void> => {
    const q = new URLSearchParams({ limit: '100' });
    for (const c of [actor, action, outcome]) if (c.value.trim()) q.set(c.name, c.value.trim());
    try {
      const reply = await api<{ items?: AuditRow[] }>(`/audit?${q.toString()}`);
      const rows = reply.items ?? [];
      replace(
        results,
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list' },
            h('thead', {}, h('tr', {}, ...['When', 'Actor', 'Action', 'Outcome'].map((t) => h('th', {}, t)))),
            h(
              'tbody',
              {},
              ...rows.map((r) =>
                h(
                  'tr',
                  {},
                  h('td', {}, when(r.at ?? r.createdAt)),
                  h('td', {}, auditActor(r)),
                  h('td', {}, `${r.category ?? ''} ${r.action ?? ''}`),
                  h('td', {}, r.outcome ?? ''),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(results, errorBox(err));
    }
  };
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h('label', { for: 'au-actor' }, 'Actor'),
    actor,
    h('label', { for: 'au-action' }, 'Action'),
    action,
    h('label', { for: 'au-outcome' }, 'Outcome'),
    outcome,
    h('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void search();
  });
  void search();
  return h('section', {}, h('h2', {}, 'Audit log'), form, results);
}

/**
 * Administration: users and roles, API keys and the audit log for admins (those
 * REST routes are admin-only); a manager is sent on to the agents page, the first
 * administration page their role opens (dagu-model §9). Lower roles get a refusal.
 */
export async function adminPage(role: Role): Promise<PageView> {
  if (role === 'manager') return agentsPage(role, new URLSearchParams());
  if (role !== 'admin') return needsManager('Administration');
  const [users, keys] = await Promise.all([usersSection(), keysSection()]);
  return {
    el: h(
      'section',
      { class: 'admin' },
      adminNav(role, '/admin'),
      h('h1', {}, 'Administration'),
      users,
      keys,
      auditSection(),
    ),
  };
}

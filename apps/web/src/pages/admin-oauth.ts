import { ApiError, apiAt, seg } from '../api';
import { errorBox, h, replace, when } from '../dom';
import type { Role } from '../model';
import type { PageView } from '../router';
import { adminNav, needsManager, seesAdministration } from './admin-nav';

/** One entry of `GET /api/mcp/authorizations`. */
interface Authorization {
  clientId: string;
  clientName?: string | null;
  scope: string;
  authorizedAt: string;
  tokenCount: number;
  userId: string;
  username: string;
  lastUsedAt: string | null;
}

/**
 * OAuth authorizations: the MCP clients people
 * authorized, with scopes, when, last use and live tokens; Revoke ends the grant (its refresh
 * tokens at once, its access tokens within the revocation bound). An admin sees everyone's
 * (`?user=all`); a manager sees their own, as the JSON API decides (dagu-model §9: OAuth grants
 * of others are admin-only). A gateway without OAuth answers 404: the page says so.
 */
export async function oauthPage(role: Role): Promise<PageView> {
  if (!seesAdministration(role)) return needsManager('OAuth authorizations');
  const all = role === 'admin';
  const body = h('div', {});
  const message = h('div', { role: 'status' });
  const load = async (): Promise<void> => {
    try {
      const reply = await apiAt<{ authorizations: Authorization[] }>(
        '/api/mcp',
        `/authorizations${all ? '?user=all' : ''}`,
      );
      const items = reply.authorizations;
      replace(
        body,
        items.length === 0
          ? h('p', { class: 'muted' }, all ? 'No client is authorized.' : 'You have authorized no client.')
          : h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'list authorizations' },
                h('caption', { class: 'sr-only' }, 'Authorized clients'),
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ...['Client', 'User', 'Scopes', 'Authorized', 'Last used', 'Tokens', ''].map((t) =>
                      h('th', { scope: 'col' }, t),
                    ),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  ...items.map((a) => {
                    const client = a.clientName ?? a.clientId;
                    return h(
                      'tr',
                      {},
                      h('td', { 'data-label': 'Client' }, client, h('div', { class: 'small muted' }, a.clientId)),
                      h('td', { 'data-label': 'User' }, a.username),
                      h(
                        'td',
                        { 'data-label': 'Scopes' },
                        ...a.scope.split(' ').map((s) => h('span', { class: 'chip' }, s)),
                      ),
                      h('td', { 'data-label': 'Authorized' }, when(a.authorizedAt)),
                      h('td', { 'data-label': 'Last used' }, when(a.lastUsedAt ?? undefined)),
                      h('td', { 'data-label': 'Tokens', class: 'num' }, String(a.tokenCount)),
                      h(
                        'td',
                        {},
                        h(
                          'button',
                          {
                            type: 'button',
                            class: 'danger small',
                            'aria-label': `Revoke ${client} for ${a.username}`,
                            onclick: () => {
                              if (!window.confirm(`Revoke ${client} for ${a.username}?`)) return;
                              const who = all ? `?user=${encodeURIComponent(a.userId)}` : '';
                              void apiAt('/api/mcp', `/authorizations/${seg(a.clientId)}${who}`, { method: 'DELETE' })
                                .then(async () => {
                                  replace(message, `${client} revoked for ${a.username}.`);
                                  await load();
                                })
                                .catch((err: unknown) => replace(message, errorBox(err)));
                            },
                          },
                          'Revoke',
                        ),
                      ),
                    );
                  }),
                ),
              ),
            ),
      );
    } catch (err) {
      if (err instanceof ApiError && err.status === 404)
        replace(body, h('p', { class: 'muted' }, 'OAuth sign-in is not enabled on this gateway.'));
      else replace(body, errorBox(err));
    }
  };
  await load();
  return {
    el: h(
      'section',
      { class: 'admin' },
      adminNav(role, '/admin/oauth'),
      h('h1', {}, 'OAuth authorizations'),
      h(
        'p',
        { class: 'muted' },
        all ? 'Every user’s authorized MCP clients.' : 'The MCP clients you authorized (admins see everyone’s).',
      ),
      body,
      message,
    ),
  };
}

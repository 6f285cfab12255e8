import './styles.css';
import { api, ApiError, BASE, setCsrfToken, signInUrl } from './api';
import { errorBox, h, replace } from './dom';
import type { Session } from './model';
import { currentPath, href, match, navigate, startRouter, type PageView, type Route } from './router';
import { dagListPage } from './pages/dag-list';
import { dagPage } from './pages/dag-page';
import { runListPage } from './pages/run-list';
import { runPage } from './pages/run-page';
import { checkpointsPage } from './pages/checkpoints';
import { adminPage } from './pages/admin';
import { agentPage, agentsPage } from './pages/admin-agents';
import { seesAdministration } from './pages/admin-nav';
import { oauthPage } from './pages/admin-oauth';
import { chartsPage } from './pages/charts';

/**
 * Who is using the console: the browser session (`GET /api/v1/session`), or — when the gateway
 * runs with authentication off (`AUTH_MODE=none`, loopback only) — the anonymous admin every
 * request acts as (`GET /api/v1/auth/me` says `credentialType: none`). `undefined`: sign in.
 */
async function currentSession(): Promise<Session | undefined> {
  try {
    return await api<Session>('/session');
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
  }
  const me = await fetch(`${BASE}/api/v1/auth/me`, { headers: { Accept: 'application/json' } });
  const body: unknown = me.ok ? await me.json() : undefined;
  if (typeof body === 'object' && body !== null && 'credentialType' in body && body.credentialType === 'none')
    return { user: { id: 'anonymous', username: 'anonymous', role: 'admin' }, csrfToken: '', expiresAt: '' };
  return undefined;
}

/**
 * The console's shell: who is signed in (`GET /api/v1/session`; none → the sign-in
 * page), the navigation the role may use, and the routed page in `<main>`.
 */
async function boot(): Promise<void> {
  const session = await currentSession();
  if (session === undefined) {
    location.assign(signInUrl());
    return;
  }
  setCsrfToken(session.csrfToken);
  const role = session.user.role;
  const app = document.getElementById('app');
  if (!app) return;
  const main = h('main', { id: 'main', tabindex: -1 });
  const navLinks: Array<[string, string]> = [
    ['/dags', 'DAGs'],
    ['/runs', 'Runs'],
    ['/checkpoints', 'Checkpoints'],
    ['/charts', 'Charts'],
  ];
  if (seesAdministration(role)) navLinks.push(['/admin', 'Administration']);
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    ...navLinks.map(([path, label]) => h('a', { href: href(path), 'data-nav': path }, label)),
  );
  const signOut = h(
    'form',
    { method: 'post', action: `${BASE}/signout`, class: 'signout' },
    h('input', { type: 'hidden', name: 'csrf', value: session.csrfToken }),
    h('span', { class: 'who' }, `${session.user.username} · ${role}`),
    h('button', { type: 'submit', class: 'link' }, 'Sign out'),
  );
  replace(
    app,
    h(
      'header',
      { class: 'top' },
      h('a', { class: 'brand', href: href('/dags') }, 'dagu'),
      nav,
      session.csrfToken !== '' ? signOut : null,
    ),
    main,
  );

  const routes: Route[] = [
    { pattern: '/dags', page: () => dagListPage(role) },
    { pattern: '/dags/:name', page: (p) => dagPage(p.name ?? '', role) },
    { pattern: '/runs', page: (_p, q) => runListPage(q) },
    { pattern: '/runs/:name/:id', page: (p) => runPage(p.name ?? '', p.id ?? '', role) },
    { pattern: '/runs/:name/:id/sub/:sub', page: (p) => runPage(p.name ?? '', p.id ?? '', role, p.sub ?? '') },
    { pattern: '/checkpoints', page: () => checkpointsPage(role) },
    { pattern: '/charts', page: () => chartsPage() },
    { pattern: '/admin', page: () => adminPage(role) },
    { pattern: '/admin/agents', page: (_p, q) => agentsPage(role, q) },
    { pattern: '/admin/agents/:ws/:agent', page: (p) => agentPage(role, p.ws ?? '', p.agent ?? '') },
    { pattern: '/admin/oauth', page: () => oauthPage(role) },
  ];
  let current: PageView | undefined;
  let generation = 0;
  const render = async (): Promise<void> => {
    const path = currentPath();
    if (path === '/') return navigate('/dags', true);
    current?.dispose?.();
    current = undefined;
    const mine = ++generation;
    for (const link of nav.querySelectorAll('a'))
      link.toggleAttribute('aria-current', path.startsWith(link.dataset.nav ?? '\0'));
    for (const route of routes) {
      const params = match(route.pattern, path);
      if (params === undefined) continue;
      replace(main, h('p', { class: 'muted' }, 'Loading…'));
      try {
        const view = await route.page(params, new URLSearchParams(location.search));
        if (mine !== generation) return view.dispose?.();
        current = view;
        replace(main, view.el);
      } catch (err) {
        if (mine === generation) replace(main, errorBox(err));
      }
      return;
    }
    replace(main, h('h1', {}, 'Not found'), h('p', {}, `No page at ${path}.`));
  };
  startRouter(() => void render());
}

void boot();

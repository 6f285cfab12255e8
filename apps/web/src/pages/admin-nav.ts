import { h } from '../dom';
import { roleAtLeast, type Role } from '../model';
import { href, type PageView } from '../router';

/**
 * The administration pages' own navigation: users, API keys and
 * the audit log for admins; agents and OAuth authorizations for managers and admins
 * (dagu-model §9). `current` is marked `aria-current="page"`.
 */
export function adminNav(role: Role, current: string): HTMLElement {
  const links: Array<[string, string]> = [];
  if (role === 'admin') links.push(['/admin', 'Users, keys, audit']);
  links.push(['/admin/agents', 'Agents'], ['/admin/oauth', 'OAuth authorizations']);
  return h(
    'nav',
    { class: 'subnav', 'aria-label': 'Administration' },
    ...links.map(([path, label]) =>
      h('a', { href: href(path), 'aria-current': path === current ? 'page' : undefined }, label),
    ),
  );
}

/** What a role below manager gets on an administration page: a refusal, no data. */
export function needsManager(title: string): PageView {
  return { el: h('section', {}, h('h1', {}, title), h('p', {}, `${title} needs the manager role or higher.`)) };
}

/** True when `role` may see any administration page (manager and up). */
export function seesAdministration(role: Role): boolean {
  return roleAtLeast(role, 'manager');
}

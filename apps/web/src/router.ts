import { BASE } from './api';

/** What a page function returns: its element and what to stop when the page is left. */
export interface PageView {
  el: HTMLElement;
  dispose?: () => void;
}

/** A route: a path pattern with `:params` and the page it shows. */
export interface Route {
  pattern: string;
  page: (params: Record<string, string>, query: URLSearchParams) => PageView | Promise<PageView>;
}

/** The path of the current location without `BASE`. */
export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path === '' ? '/' : path;
}

/** A link target inside the console (adds `BASE`). */
export function href(path: string): string {
  return `${BASE}${path}`;
}

/** Matches `path` against `pattern`; returns the decoded params or `undefined`. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.replace(/\/$/, '').split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return undefined;
  }
  return params;
}

let onNavigate: () => void = () => undefined;

/** Goes to `path` (inside the console) without a reload. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', href(path));
  else history.pushState(null, '', href(path));
  onNavigate();
}

/**
 * Starts the router: `render` runs now, on back/forward, and after {@link navigate}. Clicks
 * on same-origin links under `BASE` (not with a modifier key) navigate without a reload.
 */
export function startRouter(render: () => void): void {
  onNavigate = render;
  window.addEventListener('popstate', render);
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a') : null;
    if (!link || link.target !== '' || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || link.hasAttribute('download')) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(`${BASE}/`) || link.dataset.external !== undefined)
      return;
    event.preventDefault();
    history.pushState(null, '', url.pathname + url.search);
    render();
  });
  render();
}

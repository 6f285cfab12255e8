/**
 * A small DOM builder: the console has no component library (a lean bundle), so pages are
 * plain functions that build elements. Text always goes in as text nodes (never as HTML), so
 * nothing a DAG author or a step writes can run in the page.
 */

/** What a child may be: a node, text, or nothing (skipped). */
export type Child = Node | string | number | false | null | undefined;

/** Attributes: strings/numbers set as attributes, booleans toggle them, functions under `on…` are listeners. */
export type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** Creates `<tag>` with `attrs` and `children`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element (graphs, charts). */
export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

function applyAttrs(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

/** Appends children, skipping empty ones. */
export function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/**
 * One formatter for every date on every page: `toLocaleString` with options builds a new
 * `Intl.DateTimeFormat` per call, which cost a 200-step run page about as much as its graph.
 */
let dateFormat: Intl.DateTimeFormat | undefined;

/** `2026-12-01T19:00:00.000Z` → a short local date-time; `—` when absent. */
export function when(iso: string | undefined): string {
  if (iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  dateFormat ??= new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
  return dateFormat.format(date);
}

/** Milliseconds between two timestamps as `1.2 s`, `3 min 4 s`; `—` when unknown. */
export function duration(from?: string, to?: string): string {
  if (from === undefined) return '—';
  const ms = (to === undefined ? Date.now() : new Date(to).getTime()) - new Date(from).getTime();
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** An error as the person should read it (an alert, so screen readers announce it). */
export function errorBox(err: unknown): HTMLElement {
  const message = err instanceof Error ? err.message : String(err);
  return h('div', { class: 'error', role: 'alert' }, message);
}

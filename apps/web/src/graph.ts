import { h, replace, svg } from './dom';
import { NODE_H, NODE_W, type Layout, type LayoutInput } from './layout-types';
import { statusColour } from './status';

/** A node of the step graph: its name, what it depends on, and a status label to colour it by. */
export interface GraphNode {
  name: string;
  depends: readonly string[];
  status?: string;
}

/** A drawn graph: its element and a recolouring of its nodes (no new layout) when statuses change. */
export interface DrawnGraph {
  el: SVGElement;
  /** Sets each named node's status colour and label; unknown names are ignored. */
  recolour(statuses: ReadonlyMap<string, string>): void;
}

let worker: Worker | undefined;
let workerBroken = false;
let nextId = 0;
const waiting = new Map<number, { resolve(layout: Layout): void; reject(err: Error): void }>();

/** The one layout worker of the page, started on first use; `undefined` where workers cannot run. */
function layoutWorker(): Worker | undefined {
  if (worker !== undefined || workerBroken) return worker;
  try {
    worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
  } catch {
    workerBroken = true;
    return undefined;
  }
  worker.addEventListener('message', (event: MessageEvent<{ id: number; layout?: Layout; error?: string }>) => {
    const pending = waiting.get(event.data.id);
    waiting.delete(event.data.id);
    if (event.data.layout !== undefined) pending?.resolve(event.data.layout);
    else pending?.reject(new Error(event.data.error ?? 'layout failed'));
  });
  worker.addEventListener('error', () => {
    // A worker that cannot start (a CSP without it, an old browser): lay out here from now on.
    workerBroken = true;
    worker = undefined;
    for (const [id, pending] of waiting) {
      waiting.delete(id);
      pending.reject(new Error('layout worker failed'));
    }
  });
  return worker;
}

/** The layout on the page's own thread (dagre loaded on demand, as its own file). */
async function layoutHere(input: LayoutInput): Promise<Layout> {
  const { layoutGraph } = await import('./layout');
  return layoutGraph(input);
}

/**
 * Lays the graph out off the page's thread (layout.worker.ts; dagre runs there), so a big
 * run's page shows its status, steps and logs while the layout is computed. Falls back to
 * the page's thread where a worker cannot run.
 */
export async function layOut(nodes: readonly GraphNode[]): Promise<Layout> {
  const input: LayoutInput = { nodes: nodes.map((n) => ({ name: n.name, depends: [...n.depends] })) };
  const w = layoutWorker();
  if (w === undefined) return layoutHere(input);
  const id = ++nextId;
  try {
    return await new Promise<Layout>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      w.postMessage({ id, input });
    });
  } catch {
    return layoutHere(input);
  }
}

/**
 * Draws the step graph (DAG page: the definition; run page: coloured by step status) as one
 * SVG built off the document and inserted once. The graph is one tab stop; arrow keys, Home
 * and End move between nodes (in step order) and Enter or Space selects one (`onSelect`, one
 * delegated listener), so the graph works from the keyboard without 200 tab stops.
 */
export function drawLaidOut(
  nodes: readonly GraphNode[],
  layout: Layout,
  onSelect?: (name: string) => void,
): DrawnGraph {
  const root = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: layout.width,
    height: layout.height,
    role: 'group',
    'aria-label': 'Step graph',
  });
  const edges = svg('g', { class: 'edges' });
  for (const edge of layout.edges) {
    const d = edge.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
    edges.appendChild(svg('path', { d, class: 'edge' }));
  }
  root.appendChild(edges);
  const groups = new Map<string, SVGElement>();
  for (const node of nodes) {
    const centre = layout.centres[node.name];
    if (centre === undefined) continue;
    const colour = statusColour(node.status ?? 'not_started');
    const label = node.name.length > 22 ? `${node.name.slice(0, 21)}…` : node.name;
    const group = svg(
      'g',
      {
        class: 'node',
        transform: `translate(${(centre.x - NODE_W / 2).toFixed(1)},${(centre.y - NODE_H / 2).toFixed(1)})`,
        // One tab stop for the whole graph (roving tabindex): arrow keys move between nodes.
        tabindex: onSelect ? (groups.size === 0 ? 0 : -1) : undefined,
        role: onSelect ? 'button' : 'img',
        'aria-label': `${node.name}${node.status ? `: ${node.status.replace(/_/g, ' ')}` : ''}`,
        'data-step': node.name,
        'data-status': node.status,
      },
      svg('title', {}, node.name),
      svg('rect', { width: NODE_W, height: NODE_H, rx: 6, fill: colour.fill }),
      svg('text', { x: NODE_W / 2, y: NODE_H / 2 + 5, 'text-anchor': 'middle', fill: colour.text }, label),
    );
    groups.set(node.name, group);
    root.appendChild(group);
  }
  if (onSelect) {
    const nodeOf = (target: EventTarget | null): string | undefined =>
      target instanceof Element ? (target.closest('g.node')?.getAttribute('data-step') ?? undefined) : undefined;
    root.addEventListener('click', (event) => {
      const name = nodeOf(event.target);
      if (name !== undefined) onSelect(name);
    });
    const order = [...groups.values()];
    const moveTo = (group: SVGElement | undefined): void => {
      if (group === undefined) return;
      for (const other of order) other.setAttribute('tabindex', other === group ? '0' : '-1');
      group.focus();
    };
    root.addEventListener('keydown', (event) => {
      const name = nodeOf(event.target);
      if (name === undefined) return;
      const current = groups.get(name);
      const at = current === undefined ? 0 : order.indexOf(current);
      const step: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
      if (event.key === 'Enter' || event.key === ' ') onSelect(name);
      else if (event.key in step) moveTo(order[Math.min(order.length - 1, Math.max(0, at + (step[event.key] ?? 0)))]);
      else if (event.key === 'Home') moveTo(order[0]);
      else if (event.key === 'End') moveTo(order[order.length - 1]);
      else return;
      event.preventDefault();
    });
  }
  return {
    el: root,
    recolour: (statuses) => {
      for (const [name, status] of statuses) {
        const group = groups.get(name);
        if (group === undefined || group.getAttribute('data-status') === status) continue;
        const colour = statusColour(status);
        group.setAttribute('data-status', status);
        group.querySelector('rect')?.setAttribute('fill', colour.fill);
        group.querySelector('text')?.setAttribute('fill', colour.text);
        group.setAttribute('aria-label', `${name}: ${status.replace(/_/g, ' ')}`);
      }
    },
  };
}

/**
 * Fills `box` with the graph of `nodes`: a short note while the layout is computed off the
 * page's thread, then the drawing. Resolves with the drawn graph, or `undefined` when `box`
 * was given another graph meanwhile (`isCurrent` false).
 */
export async function drawGraphInto(
  box: HTMLElement,
  nodes: readonly GraphNode[],
  onSelect?: (name: string) => void,
  isCurrent: () => boolean = () => true,
): Promise<DrawnGraph | undefined> {
  if (nodes.length === 0) {
    replace(box, h('p', { class: 'muted small' }, 'No steps.'));
    return undefined;
  }
  replace(box, h('p', { class: 'muted small', role: 'status' }, 'Laying out the graph…'));
  try {
    const layout = await layOut(nodes);
    if (!isCurrent()) return undefined;
    const drawn = drawLaidOut(nodes, layout, onSelect);
    replace(box, drawn.el);
    return drawn;
  } catch (err) {
    if (isCurrent())
      replace(box, h('p', { class: 'error', role: 'alert' }, `The graph could not be drawn: ${String(err)}`));
    return undefined;
  }
}

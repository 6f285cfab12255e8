import dagre, { type GraphLabel } from '@dagrejs/dagre';
import { svg } from './dom';
import { statusColour } from './status';

/** A node of the step graph: its name, what it depends on, and a status label to colour it by. */
export interface GraphNode {
  name: string;
  depends: readonly string[];
  status?: string;
}

const NODE_W = 168;
const NODE_H = 40;

/** A drawn graph: its element and a recolouring of its nodes (no new layout) when statuses change. */
export interface DrawnGraph {
  el: SVGElement;
  /** Sets each named node's status colour and label; unknown names are ignored. */
  recolour(statuses: ReadonlyMap<string, string>): void;
}

/**
 * Draws the step graph (DAG page: the definition; run page: coloured by step status) as SVG,
 * laid out by dagre (left to right, dependencies as edges). Each node is focusable and
 * answers Enter as a click (`onSelect`), so the graph works from the keyboard.
 */
export function drawGraph(nodes: readonly GraphNode[], onSelect?: (name: string) => void): DrawnGraph {
  interface Box {
    width: number;
    height: number;
    x: number;
    y: number;
  }
  const g = new dagre.graphlib.Graph<GraphLabel, Box, { points?: Array<{ x: number; y: number }> }>();
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 48, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const names = new Set(nodes.map((n) => n.name));
  for (const node of nodes) g.setNode(node.name, { width: NODE_W, height: NODE_H, x: 0, y: 0 });
  for (const node of nodes) for (const dep of node.depends) if (names.has(dep)) g.setEdge(dep, node.name);
  dagre.layout(g);
  const { width = 0, height = 0 } = g.graph();
  const root = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
    width: Math.ceil(width),
    height: Math.ceil(height),
    role: 'group',
    'aria-label': 'Step graph',
  });
  for (const edge of g.edges()) {
    const points = g.edge(edge).points ?? [];
    const d = points
      .map((p: { x: number; y: number }, i: number) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`)
      .join(' ');
    root.appendChild(svg('path', { d, class: 'edge' }));
  }
  for (const node of nodes) {
    const box = g.node(node.name);
    const colour = statusColour(node.status ?? 'not_started');
    const label = node.name.length > 22 ? `${node.name.slice(0, 21)}…` : node.name;
    const group = svg(
      'g',
      {
        class: 'node',
        transform: `translate(${(box.x - NODE_W / 2).toFixed(1)},${(box.y - NODE_H / 2).toFixed(1)})`,
        tabindex: onSelect ? 0 : undefined,
        role: onSelect ? 'button' : 'img',
        'aria-label': `${node.name}${node.status ? `: ${node.status.replace(/_/g, ' ')}` : ''}`,
        'data-step': node.name,
      },
      svg('title', {}, node.name),
      svg('rect', { width: NODE_W, height: NODE_H, rx: 6, fill: colour.fill }),
      svg('text', { x: NODE_W / 2, y: NODE_H / 2 + 5, 'text-anchor': 'middle', fill: colour.text }, label),
    );
    if (onSelect) {
      group.addEventListener('click', () => onSelect(node.name));
      group.addEventListener('keydown', (event) => {
        if (!(event instanceof KeyboardEvent)) return;
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          onSelect(node.name);
        }
      });
    }
    root.appendChild(group);
  }
  return { el: root, recolour: (statuses) => recolour(root, statuses) };
}

/** Recolours the nodes of a drawn graph in place: the layout (the costly part) is kept. */
function recolour(root: SVGElement, statuses: ReadonlyMap<string, string>): void {
  for (const group of root.querySelectorAll('g.node')) {
    const name = group.getAttribute('data-step') ?? '';
    const status = statuses.get(name);
    if (status === undefined) continue;
    const colour = statusColour(status);
    group.querySelector('rect')?.setAttribute('fill', colour.fill);
    group.querySelector('text')?.setAttribute('fill', colour.text);
    group.setAttribute('aria-label', `${name}: ${status.replace(/_/g, ' ')}`);
  }
}

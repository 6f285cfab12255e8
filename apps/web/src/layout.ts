import dagre, { type GraphLabel } from '@dagrejs/dagre';
import { NODE_H, NODE_W, type Layout, type LayoutInput } from './layout-types';

export type { Layout, LayoutInput } from './layout-types';

/**
 * Above this many nodes the layout ranks nodes by longest path instead of dagre's network
 * simplex: a big graph's layout then takes a fraction of the time (network simplex grows much
 * faster than linearly) at the cost of some longer edges, which nobody reads in a 200-step
 * drawing anyway.
 */
export const SIMPLEX_MAX_NODES = 80;

/**
 * Lays the step graph out with dagre (left to right, dependencies as edges). Pure and
 * synchronous: the console runs it in a Web Worker (layout.worker.ts) so the page never
 * waits on it; it is the costly part of a big run's page.
 */
export function layoutGraph(input: LayoutInput): Layout {
  const g = new dagre.graphlib.Graph<
    GraphLabel,
    { width: number; height: number; x: number; y: number },
    { points?: Array<{ x: number; y: number }> }
  >();
  g.setGraph({
    rankdir: 'LR',
    nodesep: 18,
    ranksep: 48,
    marginx: 12,
    marginy: 12,
    ...(input.nodes.length > SIMPLEX_MAX_NODES ? { ranker: 'longest-path' } : {}),
  });
  g.setDefaultEdgeLabel(() => ({}));
  const names = new Set(input.nodes.map((n) => n.name));
  for (const node of input.nodes) g.setNode(node.name, { width: NODE_W, height: NODE_H, x: 0, y: 0 });
  for (const node of input.nodes)
    for (const dep of node.depends) if (names.has(dep) && dep !== node.name) g.setEdge(dep, node.name);
  dagre.layout(g);
  const { width = 0, height = 0 } = g.graph();
  const centres: Layout['centres'] = {};
  for (const name of names) {
    const box = g.node(name);
    centres[name] = { x: box.x, y: box.y };
  }
  const edges = g.edges().map((e) => {
    const label = g.edge(e) as { points?: Array<{ x: number; y: number }> } | undefined;
    return { from: e.v, to: e.w, points: label?.points ?? [] };
  });
  return { width: Math.ceil(width), height: Math.ceil(height), centres, edges };
}

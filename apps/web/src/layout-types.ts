/**
 * The shapes of the graph layout, apart from dagre: the page imports these; only the worker
 * (and the fallback loaded on demand) imports layout.ts and so dagre.
 */

/** What is laid out: each node's name and the names it depends on (unknown names are ignored). */
export interface LayoutInput {
  nodes: ReadonlyArray<{ name: string; depends: readonly string[] }>;
}

/** Where dagre put things: the drawing's size, each node's centre, each edge's polyline. */
export interface Layout {
  width: number;
  height: number;
  /** Node centre by name, in drawing units (px). */
  centres: Record<string, { x: number; y: number }>;
  edges: Array<{ from: string; to: string; points: Array<{ x: number; y: number }> }>;
}

/** A node's box in the drawing, px. */
export const NODE_W = 168;
export const NODE_H = 40;

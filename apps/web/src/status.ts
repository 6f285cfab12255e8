import type { RUN_STATUS_LABELS, STEP_STATUS_LABELS } from '@dagu-mcp/contracts';
import { h } from './dom';

/** Every run and step status label (contracts, dagu-model §1). */
type StatusLabel = (typeof RUN_STATUS_LABELS)[number] | (typeof STEP_STATUS_LABELS)[number];

/**
 * How a status looks: one colour per status label, used by badges, graph nodes, timeline bars
 * and charts alike. Colours pass WCAG AA against white text or their text colour.
 */
const COLOURS: Record<StatusLabel, { fill: string; text: string }> = {
  succeeded: { fill: '#1a7f37', text: '#ffffff' },
  failed: { fill: '#cf222e', text: '#ffffff' },
  running: { fill: '#0969da', text: '#ffffff' },
  retrying: { fill: '#0969da', text: '#ffffff' },
  queued: { fill: '#8250df', text: '#ffffff' },
  waiting: { fill: '#9a6700', text: '#ffffff' },
  aborted: { fill: '#57606a', text: '#ffffff' },
  rejected: { fill: '#a40e26', text: '#ffffff' },
  partially_succeeded: { fill: '#bc4c00', text: '#ffffff' },
  skipped: { fill: '#d0d7de', text: '#24292f' },
  not_started: { fill: '#eaeef2', text: '#24292f' },
};

/** The fill and text colour of a status label (unknown labels look like `not_started`). */
export function statusColour(label: string): { fill: string; text: string } {
  return (
    (COLOURS as Record<string, { fill: string; text: string } | undefined>)[label] ?? {
      fill: '#eaeef2',
      text: '#24292f',
    }
  );
}

/** A status badge: its label in words, coloured (the word carries the meaning, not only the colour). */
export function badge(label: string): HTMLElement {
  return h('span', { class: `badge s-${label}` }, label.replace(/_/g, ' '));
}

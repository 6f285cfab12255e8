import { BASE } from './api';

import type { RunEvent, StepEvent } from '@dagu-mcp/contracts';

/**
 * What `GET /api/v1/events` sends: run events (the run status changes run-service publishes),
 * and step events (sent only to streams narrowed to one run; several quick transitions of a
 * step arrive as the last), as the contracts define them.
 */
export type { RunEvent, StepEvent };

/**
 * Listens to run events, narrowed to a DAG (`name`) or a run (`dagRunId`;
 * then `onStep` also hears each step's transitions). The browser's EventSource reconnects by
 * itself; `onOpen` runs on every (re)connect so the page can reload what it shows (the stream
 * has no replay). Returns the closer.
 */
export function listenToRuns(
  filter: { name?: string; dagRunId?: string },
  onEvent: (event: RunEvent) => void,
  onOpen?: () => void,
  onStep?: (event: StepEvent) => void,
): () => void {
  const query = new URLSearchParams();
  if (filter.name !== undefined) query.set('name', filter.name);
  if (filter.dagRunId !== undefined) query.set('dagRunId', filter.dagRunId);
  const source = new EventSource(`${BASE}/api/v1/events${query.size > 0 ? `?${query.toString()}` : ''}`);
  let opened = false;
  source.addEventListener('open', () => {
    if (opened) onOpen?.();
    opened = true;
  });
  source.addEventListener('run', (message) => {
    try {
      if (!(message instanceof MessageEvent) || typeof message.data !== 'string') return;
      const event: unknown = JSON.parse(message.data);
      if (isRunEvent(event)) onEvent(event);
    } catch {
      // a malformed event is dropped; the next one or a reload shows the truth
    }
  });
  if (onStep !== undefined)
    source.addEventListener('step', (message) => {
      try {
        if (!(message instanceof MessageEvent) || typeof message.data !== 'string') return;
        const event: unknown = JSON.parse(message.data);
        if (isStepEvent(event)) onStep(event);
      } catch {
        // dropped, as above
      }
    });
  return () => source.close();
}

function isStepEvent(value: unknown): value is StepEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    'step' in value &&
    typeof value.step === 'string' &&
    'status' in value &&
    typeof value.status === 'number' &&
    'statusLabel' in value &&
    typeof value.statusLabel === 'string'
  );
}

/** A structural check of an event's data (the stream is ours, but the page trusts nothing it parses). */
function isRunEvent(value: unknown): value is RunEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    'name' in value &&
    typeof value.name === 'string' &&
    'dagRunId' in value &&
    typeof value.dagRunId === 'string' &&
    'statusLabel' in value &&
    typeof value.statusLabel === 'string'
  );
}

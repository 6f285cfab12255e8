/** DOM rendering of the run inspector (text only: every value goes through `textContent`). */
import { isRunFinished, type RunView } from '../src/run-model';

/** The elements of `index.html` the inspector fills. */
export interface ViewElements {
  readonly dagName: HTMLElement;
  readonly runId: HTMLElement;
  readonly status: HTMLElement;
  readonly note: HTMLElement;
  readonly steps: HTMLElement;
  readonly logTitle: HTMLElement;
  readonly log: HTMLElement;
  readonly refresh: HTMLButtonElement;
  readonly stop: HTMLButtonElement;
  readonly retry: HTMLButtonElement;
}

/** Shows `run` (header, buttons, one row per step); `busy` disables the actions while one is sent. */
export function renderRun(
  view: ViewElements,
  run: RunView | undefined,
  selected: string | undefined,
  busy: boolean,
): void {
  if (run === undefined) return;
  const label = run.statusLabel ?? 'loading';
  view.dagName.textContent = run.dagName;
  view.runId.textContent = run.dagRunId;
  view.status.textContent = label.replace(/_/g, ' ');
  view.status.setAttribute('data-status', label);
  const finished = isRunFinished(run.statusLabel);
  view.refresh.disabled = busy;
  view.stop.disabled = busy || finished || run.statusLabel === undefined;
  view.retry.disabled = busy || !finished;
  view.steps.replaceChildren(
    ...run.steps.map((step, index) => {
      const item = document.createElement('li');
      item.setAttribute('data-step', step.name);
      if (step.name === selected) item.classList.add('selected');
      const number = document.createElement('span');
      number.className = 'index';
      number.textContent = String(index + 1);
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = step.name;
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.setAttribute('data-status', step.statusLabel);
      badge.textContent = step.statusLabel.replace(/_/g, ' ');
      item.append(number, name, badge);
      if (step.error !== undefined) {
        const error = document.createElement('span');
        error.className = 'error';
        error.textContent = step.error;
        item.append(error);
      }
      return item;
    }),
  );
}

/** Shows the log of step `stepName` (or clears the log pane). */
export function renderLog(view: ViewElements, stepName: string | undefined, text: string): void {
  view.logTitle.textContent = stepName === undefined ? 'Log' : `Log · ${stepName}`;
  view.log.textContent = text === '' ? '(empty)' : text;
  view.log.scrollTop = view.log.scrollHeight;
}

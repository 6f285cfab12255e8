import { ActionError, type ActionOutput, type WithMap } from './action-types';
import { runFileAction } from './file-actions';
import { runHttpRequest } from './http-action';
import { runJqFilter } from './jq-action';
import { runMcpCall } from './mcp-action';
import { runTemplateRender } from './template-action';

/**
 * Runs host action `action` with its resolved `with` map in this process
 * (the helper's; dagu-actions §1.2, §1.3, §1.7, §1.8) and returns what goes to stdout.
 * `host` carries run-service's settings the action obeys (`reachable`: `OUTBOUND_ALLOW_CIDRS`).
 *
 * @throws ActionError or a Node error whose message fails the step
 */
export function runHostAction(action: string, w: WithMap, host: WithMap = {}): Promise<ActionOutput> {
  if (action === 'http.request') return runHttpRequest(w, host);
  if (action === 'mcp.call') return runMcpCall(w, host);
  if (action === 'jq.filter') return runJqFilter(w);
  if (action === 'template.render') return runTemplateRender(w);
  if (action.startsWith('file.')) return runFileAction(action, w);
  return Promise.reject(new ActionError(`${action} cannot run in the action helper`));
}

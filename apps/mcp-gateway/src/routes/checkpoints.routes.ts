import type { Request } from 'express';
import { z } from 'zod';
import type { BusClient } from '@dagu-mcp/bus';
import { completeHumanTask, decideApproval } from '../actions/checkpoint.actions';
import { runUris } from '../actions/run-control.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { dagNameParam } from './dags.routes';
import { parseRequest } from './parse-body';

/** `{values}` of a completed human task (validated against the task's form by run-service). */
const HumanTaskBodySchema = z.strictObject({ values: z.record(z.string(), z.unknown()).optional() });
/** `{decision, input?}` of an approval gate. */
const ApprovalBodySchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  input: z.record(z.string(), z.string()).optional(),
});

/** The step a checkpoint route addresses: `/dag-runs/{name}/{dagRunId}/steps/{stepName}/…`. */
function stepOf(req: Request): { dagName: string; dagRunId: string; stepName: string } {
  return {
    dagName: dagNameParam(req.params.name),
    dagRunId: String(req.params.dagRunId),
    stepName: String(req.params.stepName),
  };
}

/**
 * Checkpoint routes (issue "Checkpoints"; the checkpoint actions, operator and up): complete a
 * waiting human task, or approve / reject a waiting approval gate. The run
 * resumes by itself (no retry call needed); a rejection ends it `rejected`
 * (8). Replies with the run reference (status after the decision: 1 resumed,
 * 8 rejected, 7 when the resume is still pending) and its URIs.
 *
 * Errors: 404 (run or step), 409 (the step is not waiting on that kind of
 * checkpoint), 400 (`values` / `input` invalid, with `details.errors`).
 */
export function checkpointRoutes(bus: BusClient): RestRoutes {
  return (routes) => {
    routes.post(
      '/dag-runs/:name/:dagRunId/steps/:stepName/human-task',
      {
        action: 'run.humanTask',
        summary: 'Complete a waiting human task; the run resumes',
        tag: 'dag-runs',
        body: HumanTaskBodySchema,
      },
      async (req, res) => {
        const body = parseRequest(HumanTaskBodySchema, req.body);
        const payload = { ...stepOf(req), ...body };
        const ref = await completeHumanTask(bus, principalOf(res), payload);
        res.json({ ...ref, ...runUris(ref) });
      },
    );
    routes.post(
      '/dag-runs/:name/:dagRunId/steps/:stepName/approval',
      {
        action: 'run.approval',
        summary: 'Approve or reject a waiting approval gate',
        tag: 'dag-runs',
        body: ApprovalBodySchema,
      },
      async (req, res) => {
        const body = parseRequest(ApprovalBodySchema, req.body);
        const payload = { ...stepOf(req), ...body };
        const ref = await decideApproval(bus, principalOf(res), payload);
        res.json({ ...ref, ...runUris(ref) });
      },
    );
  };
}

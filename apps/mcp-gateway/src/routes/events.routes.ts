import type { Request, Response } from 'express';
import { z } from 'zod';
import type { RunEvent } from '@dagu-mcp/contracts';
import type { RestRoutes } from '../http/rest-router';
import type { RunEventDispatcher } from '../mcp/run-events';
import { dagNameParam } from './dags.routes';
import { parseRequest } from './parse-body';

const EventsQuerySchema = z.strictObject({
  name: z.string().min(1).optional(),
  dagRunId: z.string().min(1).optional(),
});

/** Options of {@link eventRoutes}. */
export interface EventRoutesOptions {
  /** The gateway's run-event fan-out (one Redis subscriber per replica, so every replica sees every event). */
  readonly events: RunEventDispatcher;
  /** Interval of the `: keep-alive` comment that keeps proxies from closing an idle stream, ms. */
  readonly keepAliveMs: number;
  /** The open streams, so that the gateway's stop can end them (an open stream would hold `server.close()`). */
  readonly open: Set<Response>;
}

/**
 * True when `event` passes the stream's filter (no filter: every root run). A child run's
 * events (they carry `root`) pass only a filter naming its own `dagRunId` (the console's
 * sub-run page).
 */
function matches(event: RunEvent, filter: z.infer<typeof EventsQuerySchema>): boolean {
  if (event.root !== undefined && filter.dagRunId !== event.dagRunId) return false;
  if (filter.name !== undefined && event.name !== filter.name) return false;
  return filter.dagRunId === undefined || event.dagRunId === filter.dagRunId;
}

/**
 * `GET /api/v1/events`: a `text/event-stream` of run status changes, each an
 * `event: run` whose data is the `RunEvent` run-service publishes (`{name, dagRunId,
 * attemptId?, status, statusLabel, at}`), narrowed by `?name=<DAG>` and/or `?dagRunId=<id>`.
 * A stream narrowed to one run (`?dagRunId=`) also gets `event: step` messages, the
 * `StepEvent`s of that run (`{name, dagRunId, attemptNo, step, status, statusLabel, startedAt?,
 * finishedAt?, error?, at}`, each sent once its state is in PostgreSQL); streams of many runs
 * get run events only, so a list page is not flooded by every step of every run.
 * Any role may read it (the run list shows the same). The events come through Redis pub/sub,
 * so a stream on any gateway replica sees runs changed anywhere. No replay: a client that
 * reconnects reloads what it shows and listens again.
 *
 * Errors: 400 `invalid_request` on a bad `name` or an unknown parameter.
 */
export function eventRoutes(options: EventRoutesOptions): RestRoutes {
  return (routes) => {
    routes.get(
      '/events',
      {
        action: 'events.stream',
        summary: 'Run status changes as they happen (text/event-stream), filtered by DAG name or run id',
        tag: 'dag-runs',
        query: EventsQuerySchema,
      },
      (req: Request, res: Response) => {
        const filter = parseRequest(EventsQuerySchema, req.query);
        if (filter.name !== undefined) dagNameParam(filter.name);
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('X-Accel-Buffering', 'no');
        res.flushHeaders();
        res.write(': connected\n\n');
        const removeRuns = options.events.listenWithChildren((event) => {
          if (matches(event, filter)) res.write(`event: run\ndata: ${JSON.stringify(event)}\n\n`);
        });
        const removeSteps =
          filter.dagRunId === undefined
            ? () => undefined
            : options.events.listenSteps((event) => {
                if (event.dagRunId === filter.dagRunId && (filter.name === undefined || event.name === filter.name))
                  res.write(`event: step\ndata: ${JSON.stringify(event)}\n\n`);
              });
        const remove = (): void => {
          removeRuns();
          removeSteps();
        };
        const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.keepAliveMs);
        keepAlive.unref();
        options.open.add(res);
        req.on('close', () => {
          clearInterval(keepAlive);
          remove();
          options.open.delete(res);
        });
      },
    );
  };
}

import express, { Router } from 'express';
import { DaguError } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { restErrorHandler } from './rest-errors';

/** Result of pinging one service over the bus: who answered and the round trip in ms, or the error code. */
export type ServiceProbes = Record<string, { ok: boolean; replica?: string; latencyMs?: number; error?: string }>;

/**
 * A REST route module: later capabilities (auth, API keys, wiki writes,
 * human tasks) each add one by registering on the router they are given.
 */
export type RestRoutes = (router: Router) => void;

/**
 * Builds the `/api/v1` router: JSON bodies (limit `bodyLimitBytes`),
 * `GET /health` (each service pinged over the bus), the given route modules, a JSON 404 for anything else and
 * JSON errors `{code, message, …, requestId}` — never HTML.
 */
export function createRestRouter(opts: {
  logger: Logger;
  bodyLimitBytes: number;
  version: string;
  /** Probes every service over the bus; `GET /health` reports the result. */
  probeServices: () => Promise<ServiceProbes>;
  routes?: RestRoutes[];
}): Router {
  const router = Router();
  router.use(express.json({ limit: opts.bodyLimitBytes }));
  router.get('/health', async (_req, res, next) => {
    try {
      const services = await opts.probeServices();
      const ok = Object.values(services).every((s) => s.ok);
      res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', version: opts.version, services });
    } catch (err) {
      next(err);
    }
  });
  for (const add of opts.routes ?? []) add(router);
  router.use((req, _res, next) => {
    next(new DaguError('resource_not_found', `No route for ${req.method} ${req.baseUrl}${req.path}.`));
  });
  router.use(restErrorHandler(opts.logger));
  return router;
}

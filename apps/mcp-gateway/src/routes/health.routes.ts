import type { RestRoutes, ServiceProbes } from '../http/rest-router';

/** `GET /api/v1/health` (public): the gateway's version and every service pinged over the bus; 503 when one is down. */
export function healthRoutes(deps: { version: string; probeServices: () => Promise<ServiceProbes> }): RestRoutes {
  return (routes) => {
    routes.get(
      '/health',
      { action: 'meta.health', summary: 'Gateway version and every service pinged over the bus', tag: 'meta' },
      async (_req, res) => {
        const services = await deps.probeServices();
        const ok = Object.values(services).every((s) => s.ok);
        res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', version: deps.version, services });
      },
    );
  };
}

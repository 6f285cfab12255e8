/**
 * The ports of a local stack (`npm start`, scripts/run-stack.js; issue 53 item 2: a second stack
 * beside a running one).
 *
 * - `STACK_PORT_BASE=N` pins every port: the gateway `N`, dag-service, run-service, wiki-service
 *   and agent-service `N+1`…`N+4` (ops ports), the gateway's metrics `N+5`. It overrides `PORT`,
 *   `OPS_PORT` and `METRICS_PORT`; a pinned port that is taken stops the start (`EADDRINUSE`).
 * - Without it the gateway listens on `PORT` (default 8080, never replaced: it is the address
 *   people and clients use) and every ops and metrics port is its default (8081–8084, 9464) or
 *   `OPS_PORT`/`METRICS_PORT` when set; a default that is taken on this host is replaced by a free
 *   one the OS picks. An explicit `OPS_PORT`/`METRICS_PORT` is used as given.
 *
 * A taken port is one that cannot be bound on the app's own bind address (`OPS_HOST`, default
 * `0.0.0.0`; `METRICS_HOST`, default `127.0.0.1`). Another process may take a free port before
 * the app binds it; start stacks one after the other.
 */
'use strict';
const net = require('node:net');

/** The services of a stack, in `STACK_PORT_BASE` order, with their default ops ports. */
const SERVICES = [
  ['dag-service', 8081],
  ['run-service', 8082],
  ['wiki-service', 8083],
  ['agent-service', 8084],
];
/** The gateway's default public and metrics ports. */
const DEFAULT_PORT = 8080;
const DEFAULT_METRICS_PORT = 9464;

/**
 * Whether `port` can be bound on `host` now (listens, then closes at once).
 *
 * @param {number} port
 * @param {string} host bind address, e.g. `0.0.0.0`
 * @returns {Promise<boolean>}
 */
function isFree(port, host) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A port the OS picks as free on `host`.
 *
 * @param {string} host
 * @returns {Promise<number>}
 */
function anyFreePort(host) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Parses a port variable: an integer 0–65535, else `undefined` when unset.
 *
 * @throws {Error} naming the variable when it is set to something else
 */
function portOf(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${name} must be a port (0-65535), got "${raw}"`);
  return port;
}

/**
 * Plans the stack's ports (see the module comment).
 *
 * @param {NodeJS.ProcessEnv} env the stack's environment
 * @returns {Promise<{ gateway: number, metrics: number, services: Record<string, number>, replaced: string[] }>}
 *   `services` by app name; `replaced`: "run-service 8082 taken, using 40123"-like notes
 * @throws {Error} when `STACK_PORT_BASE`, `PORT`, `OPS_PORT` or `METRICS_PORT` is not a port, or the base leaves no room for N+5
 */
async function planStackPorts(env) {
  const base = portOf(env, 'STACK_PORT_BASE');
  if (base !== undefined) {
    if (base < 1 || base + 5 > 65535) throw new Error(`STACK_PORT_BASE must be 1-65530, got "${env.STACK_PORT_BASE}"`);
    const services = Object.fromEntries(SERVICES.map(([app], i) => [app, base + 1 + i]));
    return { gateway: base, metrics: base + 5, services, replaced: [] };
  }
  const replaced = [];
  const pick = async (label, explicit, fallback, host) => {
    if (explicit !== undefined) return explicit;
    if (await isFree(fallback, host)) return fallback;
    const port = await anyFreePort(host);
    replaced.push(`${label} ${fallback} taken, using ${port}`);
    return port;
  };
  const opsHost = env.OPS_HOST || '0.0.0.0';
  const opsPort = portOf(env, 'OPS_PORT');
  const services = {};
  for (const [app, fallback] of SERVICES) services[app] = await pick(app, opsPort, fallback, opsHost);
  const metrics = await pick(
    'metrics',
    portOf(env, 'METRICS_PORT'),
    DEFAULT_METRICS_PORT,
    env.METRICS_HOST || '127.0.0.1',
  );
  return { gateway: portOf(env, 'PORT') ?? DEFAULT_PORT, metrics, services, replaced };
}

/**
 * The environment one app of the stack gets for its ports: the gateway `PORT` and
 * `METRICS_PORT`, a service `OPS_PORT`.
 *
 * @param {string} app e.g. `mcp-gateway`, `dag-service`
 * @param {{ gateway: number, metrics: number, services: Record<string, number> }} plan from {@link planStackPorts}
 * @returns {Record<string, string>}
 */
function portEnvOf(app, plan) {
  if (app === 'mcp-gateway') return { PORT: String(plan.gateway), METRICS_PORT: String(plan.metrics) };
  return { OPS_PORT: String(plan.services[app]) };
}

/** One line for the start: every port, and which defaults were taken. */
function describePlan(plan) {
  const services = Object.entries(plan.services).map(([app, port]) => `${app} ${port}`);
  const parts = [`gateway ${plan.gateway}`, ...services, `metrics ${plan.metrics}`];
  const note = plan.replaced.length > 0 ? ` (${plan.replaced.join('; ')})` : '';
  return `ports: ${parts.join(', ')}${note}`;
}

module.exports = { planStackPorts, portEnvOf, describePlan, SERVICES, DEFAULT_PORT, DEFAULT_METRICS_PORT };

/**
 * The layers of each app (docs/architecture.md "Layout"), checked by
 * `layers.test.ts` and counted by `scripts/import-layers.mjs`.
 *
 * `floors` go from the bottom up. Each entry is a unit of `apps/<app>/src`: a
 * folder (`store`), a nested folder or a single file that is declared as its
 * own unit (`mcp/transport`, `mcp/mcp-server.ts`: the longest declared unit
 * containing a file wins), or a top-level file (`main.ts`). A file may import
 * its own unit and any unit on a lower floor. Units on the same floor are
 * peers: they may not import each other unless the pair is listed in
 * `peerImports`. Every folder and top-level file of `src` must be declared. A
 * folder split into nested units (the gateway's `mcp/`) has its inner floors
 * in the same list, in their place between the floors below and above it;
 * `scripts/import-layers.mjs` counts its inner arrows apart.
 */
export interface AppLayers {
  floors: ReadonlyArray<readonly string[]>;
  /** Peer imports allowed on one floor, as `[from, to]` units. */
  peerImports?: ReadonlyArray<readonly [string, string]>;
  /** When set, the only units whose files may run SQL (call `.query(` or import `pg`). */
  sqlUnits?: readonly string[];
}

export const APP_LAYERS: Readonly<Record<string, AppLayers>> = {
  // apps/run-service/README.md "Layers" draws and explains these floors.
  'run-service': {
    sqlUnits: ['store'], // CONTRIBUTING "Where SQL lives"
    floors: [
      ['config'], //                          RUN_* config, named queue limits
      ['core'], //                            pure: graph, params, interpolation, outcome rules, step execution contract
      // child processes and run environment | all SQL | workbook reads (021 `workbook`) | the action helper
      // (its own process, dagu-actions §1: jq.filter, template.render, file.*)
      ['process', 'store', 'workbook', 'actions'],
      ['events'], //                          run events, stop requests between replicas
      ['executors'], //                       step-kind registry and the built-in executors
      ['composition', 'foreach'], //          sub-DAG and foreach executors (register into executors/)
      ['engine'], //                          orchestration: attempts, graph, steps, hand-back, dispatcher
      ['runs', 'read'], //                    commands (start, retry, stop, decisions) | reads (detail, sub-runs, foreach, list, logs)
      ['recovery', 'retention', 'schedule'], // background loops of every replica
      ['handlers'], //                        bus handlers
      ['run-service.ts'],
      ['main.ts'],
    ],
  },
  'dag-service': {
    floors: [['config', 'db'], ['dags'], ['handlers'], ['dag-service.ts'], ['main.ts']],
  },
  'wiki-service': {
    floors: [['db'], ['pages'], ['handlers'], ['wiki-service.ts'], ['main.ts']],
  },
  'agent-service': {
    // config: AGENT_* settings and the key ring; rest: upstreams, operations, the upstream calls (issue 25).
    floors: [['config', 'db'], ['agents', 'rest'], ['handlers'], ['agent-service.ts'], ['main.ts']],
  },
  // The web console (issue 26): browser code; pages on top of the shell's small modules.
  web: {
    floors: [
      ['dom.ts', 'model.ts', 'api.ts', 'layout-types.ts'], // DOM builder | response shapes | the REST client | layout shapes
      ['status.ts', 'router.ts', 'live.ts', 'layout.ts'], // status colours | history routing | run and step events | dagre layout
      ['graph.ts', 'layout.worker.ts'], // the step graph's drawing | the layout's worker (dagre off the page's thread)
      ['pages'], //                      one file per page or page part
      ['main.ts'], //                    the shell: session, navigation, routes
    ],
  },
  // The gateway (docs/architecture.md "Layout"): stores and catalogs, the actions every face calls,
  // authentication, the HTTP plumbing, the MCP protocol floor by floor, then the faces (agent
  // endpoints, REST routes) and the wiring that builds them all for main.ts.
  'mcp-gateway': {
    floors: [
      ['config.ts', 'version.ts'],
      ['db', 'audit', 'reference', 'metrics', 'usage'], // usage: agent endpoint calls, counted and stored (issue 25)
      ['actions'], // protocol-neutral operations: role check, cross-service rules, bus calls (issue 40)
      ['auth'],
      ['oauth'], //                          built-in OAuth authorization server (issue 23): tokens, grants, clients, provider
      ['http'], // request ids, auth middleware, error mapping: the transport (mcp/) uses them
      // mcp/, floor by floor (docs/mcp-transport.md): HTTP, sessions and streams at the bottom, knowing no
      // method; the methods above them know no Express.
      ['mcp/transport'], // Streamable HTTP, sessions and streams in Redis, JSON-RPC framing, the dispatcher interface
      ['mcp/session-manager.ts'], // one endpoint's transport parts, built together around a dispatcher
      [
        'mcp/mcp-types.ts', // the handler set the tools and resources make up
        'mcp/apps', //         MCP Apps (issue 27): the run inspector resource and tool metadata
        'mcp/run-events.ts', // run and step events from run-service, fanned out in process
        'mcp/run-subscriptions.ts', // resources/subscribe on runs: one replica relays each event
        'mcp/resource-catalog.ts', // resources/list and the URI templates
        'mcp/task-store.ts', // tasks extension (issue 48): task records in Redis, the task wire part
      ],
      ['mcp/extensions', 'mcp/tools', 'mcp/task-calls.ts'], // extension catalogs and calls (issue 29) | dagu_read, dagu_change, dagu_execute | other tools' calls run as tasks (issue 48)
      ['mcp/prompts', 'mcp/mcp-server.ts', 'mcp/gateway-handlers.ts', 'mcp/task-methods.ts'], // prompts | initialize, tools/* | the gateway's handler set | tasks/get, tasks/update, tasks/cancel
      ['mcp/completion', 'mcp/resource-methods.ts', 'mcp/server-card.ts'], // completion/complete | resources/* | the server card
      ['mcp/mcp-dispatcher.ts'], // the gateway's method table
      ['mcp/mcp-setup.ts'], //      an MCP endpoint built: sessions, dispatcher, extension router, tool-list watcher
      ['agents'], // published agents' endpoints: catalogs, narrowed tools, the agents' dispatcher (issue 24)
      ['routes'],
      ['wiring'], // builds auth (with its routes and middleware), the OAuth server, the agent endpoints for main.ts
      ['cli', 'app.ts'],
      ['main.ts'],
    ],
  },
};

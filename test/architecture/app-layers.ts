/**
 * The layers of each app (docs/architecture.md "Layout"), checked by
 * `layers.test.ts` and counted by `scripts/import-layers.mjs`.
 *
 * `floors` go from the bottom up. Each entry is a unit of `apps/<app>/src`: a
 * folder (`store`), a nested folder or a single file that is declared as its
 * own unit (`auth/auth-setup.ts`: the longest declared unit containing a file
 * wins), or a top-level file (`main.ts`). A file may import its own unit and
 * any unit on a lower floor. Units on the same floor are peers: they may not
 * import each other unless the pair is listed in `peerImports`. Every folder
 * and top-level file of `src` must be declared.
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
      ['process', 'store', 'workbook'], //    child processes and run environment | all SQL | workbook reads (021 `workbook`)
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
  // The gateway as it stands: `mcp/` (protocol, tools, transport, prompts, completion, extensions) is one unit;
  // `auth/auth-setup.ts` wires the auth routes and middleware, so it sits above `http/` and `routes/`.
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
  'mcp-gateway': {
    floors: [
      ['config.ts', 'version.ts'],
      ['db', 'audit', 'reference', 'metrics', 'usage'], // usage: agent endpoint calls, counted and stored (issue 25)
      ['auth'],
      ['oauth'], //                          built-in OAuth authorization server (issue 23): tokens, grants, clients, provider
      ['http'], // request ids, auth middleware, error mapping: the transport (mcp/) uses them
      ['mcp'],
      ['agents'], // published agents' endpoints: catalogs, narrowed tools, the agents' dispatcher (issue 24)
      ['routes'],
      ['auth/oauth-setup.ts'], //            wires oauth/ with its pages and routes
      ['auth/auth-setup.ts'],
      ['cli', 'app.ts'],
      ['main.ts'],
    ],
  },
};

import { defineOps, PingReplySchema, PingRequestSchema } from './bus';

/**
 * The op catalogs of the three services. Each later capability adds its ops
 * here (additively: a breaking change is a new op name, CONVENTIONS §3).
 */
export const dagOps = defineOps({
  ping: { request: PingRequestSchema, reply: PingReplySchema, mutation: false },
});

export const runOps = defineOps({
  ping: { request: PingRequestSchema, reply: PingReplySchema, mutation: false },
});

export const wikiOps = defineOps({
  ping: { request: PingRequestSchema, reply: PingReplySchema, mutation: false },
});

export const OP_CATALOGS = { dag: dagOps, run: runOps, wiki: wikiOps } as const;
export type DagOps = typeof dagOps;
export type RunOps = typeof runOps;
export type WikiOps = typeof wikiOps;


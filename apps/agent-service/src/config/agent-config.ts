import { z } from 'zod';
import { env, parseConfig, type AddressRanges } from '@dagu-mcp/runtime';

/**
 * Settings of agent-service beyond the shared service settings (service-kit),
 * parsed once at start (CONTRIBUTING §8). Every variable is optional.
 *
 * | Variable | Meaning | Unit | Default |
 * | --- | --- | --- | --- |
 * | `DAGU_ENCRYPTION_KEY` | key ring encrypting upstream credentials of REST operations in PostgreSQL, the same ring as the gateway's and run-service's: `id:base64key[,…]` or one bare base64 32-byte key; unset: a development key in the temp directory when `DATABASE_URL` is on this host (loopback), else saving an upstream credential or calling a REST tool whose upstream has one fails with `resource_unavailable` | — | — |
 * | `OUTBOUND_ALLOW_CIDRS` | comma-separated CIDR ranges (`10.20.0.0/16,fd00:ec2::254/128`) of non-public addresses (loopback, private, link-local, unique-local, …) that calls made on an author's behalf — REST operations' upstream calls — may reach; empty: none, whatever an upstream's `allowHosts` says. IPv4-mapped IPv6 addresses are matched as their IPv4 form (docs/decisions.md "Outbound calls reach internal addresses only where the deployment allows it") | — | empty |
 */
export function agentConfigSchema() {
  return z.object({
    DAGU_ENCRYPTION_KEY: z.string().min(1).optional(),
    OUTBOUND_ALLOW_CIDRS: env.outboundAllowCidrs,
  });
}

/** The agent-service settings in the shape the service uses. */
export interface AgentConfig {
  /** The secrets-at-rest key ring (`DAGU_ENCRYPTION_KEY`), for upstream credentials. */
  readonly encryptionKey?: string;
  /** Non-public addresses REST operations may reach (`OUTBOUND_ALLOW_CIDRS`); none when absent. */
  readonly outboundAllowCidrs?: AddressRanges;
}

/**
 * Parses the agent-service settings from `source` (default `process.env`;
 * `DAGU_ENCRYPTION_KEY_FILE` is read by `parseConfig`).
 *
 * @throws ConfigError naming every bad variable (a malformed `OUTBOUND_ALLOW_CIDRS` range among them)
 */
export function loadAgentConfig(source: NodeJS.ProcessEnv = process.env): AgentConfig {
  const raw = parseConfig(agentConfigSchema(), source);
  return {
    ...(raw.DAGU_ENCRYPTION_KEY !== undefined ? { encryptionKey: raw.DAGU_ENCRYPTION_KEY } : {}),
    outboundAllowCidrs: raw.OUTBOUND_ALLOW_CIDRS,
  };
}

import { z } from 'zod';
import { RoleSchema, type Role } from './principal';
import { CHANGE_TYPES } from './change-types';
import { ExtensionNameSchema, ExtensionToolNameSchema } from './mcp-extension';
import { OperationNameSchema, OperationVersionSelectorSchema } from './rest-operation';
import { WikiWorkspaceSchema } from './wiki';

/**
 * Published agents: an agent lives in a workspace (the workspaces
 * of the wiki and the `workspace=<name>` DAG label), has a slug, a state and
 * a catalog — a list of bindings, each one MCP tool on the agent's endpoint
 * `/mcp/v1/{workspace}/{agent}`. agent-service owns agents and catalogs; the
 * gateway owns the agents' keys and serves the endpoints.
 */

/** An agent's slug: lower-case letters, digits and `-`, 1–40 characters, not starting with `-`. */
export const AGENT_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** A tool name on an agent endpoint (MCP tool-name rules). */
export const AGENT_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** Most bindings in one agent's catalog. */
export const AGENT_TOOLS_MAX = 100;

export const AgentSlugSchema = z.string().regex(AGENT_SLUG_PATTERN, 'must match ^[a-z0-9][a-z0-9-]{0,39}$');
export const AgentToolNameSchema = z.string().regex(AGENT_TOOL_NAME_PATTERN, 'must match ^[A-Za-z0-9_.-]{1,64}$');

/** `draft`: being configured, no endpoint; `published`: served; `disabled`: kept, not served. */
export const AgentStateSchema = z.enum(['draft', 'published', 'disabled']);
export type AgentState = z.infer<typeof AgentStateSchema>;

/** The Dagu tools an agent may carry, narrowed. */
export const DAGU_TOOL_NAMES = ['dagu_read', 'dagu_change', 'dagu_execute'] as const;
export const DaguToolNameSchema = z.enum(DAGU_TOOL_NAMES);

const Title = z.string().trim().min(1).max(200);
const Description = z.string().max(2000);
const DagNameSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, 'must be a DAG name');
/** A label selector: `key=value` or a bare `key` (matches `key` and every `key=…`). */
const LabelSelector = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((s) => !s.startsWith('='), 'must be "key=value" or "key"');
const nonEmpty = <T extends z.ZodType>(item: T) => z.array(item).min(1).max(100);

/**
 * What a narrowed Dagu tool may touch. Every field is
 * optional; an absent field does not narrow. `targets` applies to
 * `dagu_read`, `changeModes`/`changeTypes` to `dagu_change`, `actions` to
 * `dagu_execute`; `dags`/`dagLabels` (a DAG is allowed when its name is in
 * `dags` or one of its labels matches a selector) and `wikiWorkspaces`
 * apply to every tool that names a DAG or a workspace.
 */
export const DaguToolRestrictionsSchema = z.strictObject({
  targets: nonEmpty(z.string().min(1).max(40)).optional(),
  changeModes: nonEmpty(z.enum(['preview', 'apply'])).optional(),
  changeTypes: nonEmpty(z.enum(CHANGE_TYPES)).optional(),
  actions: nonEmpty(z.enum(['start', 'enqueue', 'retry', 'stop'])).optional(),
  dags: nonEmpty(DagNameSchema).optional(),
  dagLabels: nonEmpty(LabelSelector).optional(),
  wikiWorkspaces: nonEmpty(WikiWorkspaceSchema).optional(),
});
export type DaguToolRestrictions = z.infer<typeof DaguToolRestrictionsSchema>;

/** A Dagu tool bound with restrictions; its tool name defaults to the Dagu tool's own. */
export const DaguToolBindingSchema = z.strictObject({
  kind: z.literal('dagu_tool'),
  tool: DaguToolNameSchema,
  name: AgentToolNameSchema.optional(),
  title: Title.optional(),
  description: Description.optional(),
  restrictions: DaguToolRestrictionsSchema.default({}),
});

/** A DAG as a tool: its params are the input schema; a call starts it and waits up to `waitSeconds` (default 60). */
export const DagToolBindingSchema = z.strictObject({
  kind: z.literal('dag'),
  dag: DagNameSchema,
  name: AgentToolNameSchema.optional(),
  title: Title.optional(),
  description: Description.optional(),
  waitSeconds: z.number().int().min(1).max(300).optional(),
});

/**
 * An extension service's tool (docs/extending.md): `service` is the
 * extension's name, `tool` the tool's own name in it (served on `/mcp` as
 * `<service>.<tool>`). Its tool name defaults to that served name, so a pair longer than
 * the 64 characters of a tool name needs a `name`. The gateway serves it only while the
 * extension is enabled, announcing and allows the tool; it keeps the tool's input schema,
 * minimum role (checked against the binding author's current role), deadline and errors.
 */
export const ExtensionToolBindingSchema = z
  .strictObject({
    kind: z.literal('extension_tool'),
    service: ExtensionNameSchema,
    tool: ExtensionToolNameSchema,
    name: AgentToolNameSchema.optional(),
    title: Title.optional(),
    description: Description.optional(),
  })
  .refine((b) => b.name !== undefined || `${b.service}.${b.tool}`.length <= 64, {
    message: 'service.tool is longer than 64 characters: give the binding a "name"',
    path: ['name'],
  });

/** The default tool name of an extension-tool binding: the name `/mcp` serves it under. */
export function extensionBindingToolName(binding: { service: string; tool: string }): string {
  return `${binding.service}.${binding.tool}`;
}

/**
 * A published REST operation as a tool: `version` is a published
 * version's number or `latest` (default: the newest published version, so
 * publishing a new version changes the tool). A draft is never served.
 */
export const RestOperationBindingSchema = z.strictObject({
  kind: z.literal('rest_operation'),
  operation: OperationNameSchema,
  version: OperationVersionSelectorSchema.default('latest'),
  name: AgentToolNameSchema.optional(),
  title: Title.optional(),
  description: Description.optional(),
});

/**
 * One catalog entry, discriminated by `kind` so later kinds (REST
 * operations, extension tools) are added without touching these.
 */
export const AgentBindingSchema = z.discriminatedUnion('kind', [
  DaguToolBindingSchema,
  DagToolBindingSchema,
  ExtensionToolBindingSchema,
  RestOperationBindingSchema,
]);
export type AgentBinding = z.infer<typeof AgentBindingSchema>;

/** Who configured a binding: the principal id the gateway looks the current role of up per call. */
export const BindingAuthorSchema = z.object({ id: z.string().min(1), subject: z.string().min(1) });
export type BindingAuthor = z.infer<typeof BindingAuthorSchema>;

/** A binding as stored: the binding, its resolved tool name and who configured it. */
export const StoredBindingSchema = z.intersection(
  AgentBindingSchema,
  z.object({ toolName: AgentToolNameSchema, createdBy: BindingAuthorSchema, createdAt: z.string() }),
);
export type StoredBinding = z.infer<typeof StoredBindingSchema>;

/**
 * The fields a catalog read adds to each binding (`toolName`, `createdBy`, `createdAt`): the
 * writes accept them and ignore them, so a read can be sent back unchanged (docs/decisions.md "Admin APIs that round-trip").
 */
export const STORED_BINDING_READ_ONLY_FIELDS = ['toolName', 'createdBy', 'createdAt'] as const;

/**
 * A binding as a write takes it: `value` without {@link STORED_BINDING_READ_ONLY_FIELDS} when it
 * is an object; anything else unchanged (the schema then refuses it).
 */
export function withoutReadOnlyBindingFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const readOnly: readonly string[] = STORED_BINDING_READ_ONLY_FIELDS;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !readOnly.includes(key)));
}

/** A stored binding as the binding it was made from (what `agent.setTools` takes back). */
export function bindingOfStored(stored: StoredBinding): AgentBinding {
  return AgentBindingSchema.parse(withoutReadOnlyBindingFields(stored));
}

/** The tool name a binding publishes: its `name`, else the Dagu tool's name, the DAG's name, the operation's name or `<service>.<tool>`. */
export function bindingToolName(binding: AgentBinding): string {
  if (binding.name !== undefined) return binding.name;
  if (binding.kind === 'extension_tool') return extensionBindingToolName(binding);
  if (binding.kind === 'rest_operation') return binding.operation;
  return binding.kind === 'dagu_tool' ? binding.tool : binding.dag;
}

/**
 * Who may sign in to an agent's endpoint with OAuth, and with whose authority
 *:
 * - `keys`: agent keys only; no OAuth metadata or challenge, an OAuth token is refused;
 * - `own_role` (the default): a person signs in and acts with their own current role,
 *   capped by the token's scopes, narrowed by the catalog and the binding authors' roles;
 * - `delegated`: the people whose role is in `roles` or whose username is in `users` act
 *   with the binding authors' authority (as an agent key does), capped by the token's scopes;
 *   anyone else is refused at consent and on every call.
 */
export const AgentSignInSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('keys') }),
  z.strictObject({ mode: z.literal('own_role') }),
  z
    .strictObject({
      mode: z.literal('delegated'),
      roles: z.array(RoleSchema).max(5).optional(),
      users: z.array(z.string().trim().min(1).max(200)).max(100).optional(),
    })
    .refine((s) => (s.roles?.length ?? 0) + (s.users?.length ?? 0) > 0, {
      message: 'delegated sign-in needs at least one role or user',
      path: ['roles'],
    }),
]);
export type AgentSignIn = z.infer<typeof AgentSignInSchema>;

/**
 * Whether a `delegated` agent's list names a person: their current role is in
 * `roles`, or their username is in `users`. Always false for another mode.
 */
export function isAgentDelegate(signIn: AgentSignIn, person: { username: string; role: Role }): boolean {
  if (signIn.mode !== 'delegated') return false;
  return (signIn.roles ?? []).includes(person.role) || (signIn.users ?? []).includes(person.username);
}

/** The sign-in policy of an agent that never set one. */
export const DEFAULT_AGENT_SIGN_IN: AgentSignIn = Object.freeze({ mode: 'own_role' });

/** The agent model (REST and bus). `version` grows with every change of the agent or its catalog. */
export const AgentSchema = z.object({
  id: z.string(),
  workspace: z.string(),
  slug: z.string(),
  title: z.string(),
  description: z.string(),
  state: AgentStateSchema,
  signIn: AgentSignInSchema,
  version: z.number().int(),
  toolCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  createdBy: z.string(),
  updatedBy: z.string(),
});
export type Agent = z.infer<typeof AgentSchema>;

/** An agent with its catalog. */
export const AgentWithToolsSchema = AgentSchema.extend({ tools: z.array(StoredBindingSchema) });
export type AgentWithTools = z.infer<typeof AgentWithToolsSchema>;

export const AgentRefSchema = z.strictObject({ workspace: WikiWorkspaceSchema, slug: AgentSlugSchema });
export type AgentRef = z.infer<typeof AgentRefSchema>;

export const AgentListRequestSchema = z.strictObject({ workspace: WikiWorkspaceSchema });
export const AgentListReplySchema = z.object({ items: z.array(AgentSchema) });

export const AgentCreateRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  slug: AgentSlugSchema,
  title: Title,
  description: Description.default(''),
  state: AgentStateSchema.default('draft'),
  signIn: AgentSignInSchema.optional(),
});
export type AgentCreateRequest = z.infer<typeof AgentCreateRequestSchema>;

export const AgentUpdateRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  slug: AgentSlugSchema,
  title: Title.optional(),
  description: Description.optional(),
  state: AgentStateSchema.optional(),
  signIn: AgentSignInSchema.optional(),
});
export type AgentUpdateRequest = z.infer<typeof AgentUpdateRequestSchema>;

/**
 * `agent.setTools`: the whole new catalog. `ifVersion` (optional) makes it conditional: the
 * change is refused with `conflict` (field `ifVersion`, `details.version` the current one) when
 * the agent's version is another — the gateway's one-binding routes read, change one binding and
 * write with it, so a change made in between is never lost (docs/decisions.md "Admin APIs that round-trip").
 */
export const AgentSetToolsRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  slug: AgentSlugSchema,
  tools: z.array(AgentBindingSchema).max(AGENT_TOOLS_MAX),
  ifVersion: z.number().int().min(0).optional(),
});
export type AgentSetToolsRequest = z.infer<typeof AgentSetToolsRequestSchema>;

export const AgentDeleteReplySchema = z.object({ id: z.string(), deleted: z.literal(true) });

import { randomUUID } from 'node:crypto';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Pool, SecretBox } from '@dagu-mcp/runtime';
import type { MetadataDocuments } from './metadata-documents';
import { checkClientMetadata } from './client-metadata';

const SECRET_PURPOSE = 'oauth-client-secret';

/** A client as the consent page shows it. */
export interface ClientView {
  readonly clientId: string;
  readonly clientName: string;
  /** `registered` by DCR (self-registered: "unverified"), `metadata_document` by its URL (CIMD). */
  readonly source: 'registered' | 'metadata_document';
}

/** The name shown for a client: its `client_name`, else its id. */
export function clientNameOf(client: OAuthClientInformationFull): string {
  return client.client_name !== undefined && client.client_name.trim() !== ''
    ? client.client_name.trim()
    : client.client_id;
}

/**
 * Clients of the authorization server, for the SDK's
 * handlers: dynamically registered ones (RFC 7591) in `oauth_clients` — public
 * by default (`token_endpoint_auth_method` `none`), a confidential client's
 * secret encrypted with the secret box — and Client ID Metadata Documents,
 * whose `client_id` is an `https` URL fetched under the SSRF guard.
 */
export class ClientStore implements OAuthRegisteredClientsStore {
  constructor(private readonly deps: { pool: Pool; box: SecretBox; documents: MetadataDocuments | undefined }) {}

  /** The client, or undefined when unknown (a metadata document that fails to load is unknown too). */
  async getClient(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    if (clientId.startsWith('https://')) {
      return this.deps.documents === undefined ? undefined : this.deps.documents.load(clientId).catch(() => undefined);
    }
    const { rows } = await this.deps.pool.query<{ metadata: OAuthClientInformationFull; secret_enc: string | null }>(
      "SELECT metadata, secret_enc FROM oauth_clients WHERE client_id = $1 AND source = 'registered'",
      [clientId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return row.secret_enc === null
      ? row.metadata
      : { ...row.metadata, client_secret: this.deps.box.decrypt(row.secret_enc, SECRET_PURPOSE) };
  }

  /**
   * Dynamic Client Registration (RFC 7591 §3.2.1, answered 201 by the SDK handler):
   * checks the metadata, makes the client public unless it asked for a
   * secret-based method, stores it.
   *
   * @throws InvalidClientMetadataError for metadata this server refuses
   */
  async registerClient(
    client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'> & { client_id?: string },
  ): Promise<OAuthClientInformationFull> {
    checkClientMetadata(client);
    const method = client.token_endpoint_auth_method ?? 'none';
    if (!['none', 'client_secret_post'].includes(method)) {
      throw new InvalidClientMetadataError(
        `token_endpoint_auth_method ${method} is not supported (none, client_secret_post)`,
      );
    }
    const { client_secret: secret, ...rest } = client;
    const full: OAuthClientInformationFull = {
      ...rest,
      client_id: client.client_id ?? randomUUID(),
      client_id_issued_at: Math.floor(Date.now() / 1000),
      token_endpoint_auth_method: method,
      grant_types: client.grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: client.response_types ?? ['code'],
    };
    if (method === 'none') delete full.client_secret_expires_at;
    const keptSecret = method === 'none' ? undefined : secret;
    await this.deps.pool.query(
      "INSERT INTO oauth_clients (client_id, metadata, secret_enc, source) VALUES ($1, $2, $3, 'registered')",
      [
        full.client_id,
        JSON.stringify(full),
        keptSecret === undefined ? null : this.deps.box.encrypt(keptSecret, SECRET_PURPOSE),
      ],
    );
    return keptSecret === undefined ? full : { ...full, client_secret: keptSecret };
  }
}

import { InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { redirectUriProblem } from './redirect-uris';

/**
 * Checks a client's metadata against this server's rules:
 * at least one redirect URI, each allowed by {@link redirectUriProblem};
 * grant types among `authorization_code` and `refresh_token`; response type `code`.
 *
 * @throws InvalidClientMetadataError naming the first problem
 */
export function checkClientMetadata(
  client: Pick<OAuthClientInformationFull, 'redirect_uris' | 'grant_types' | 'response_types'>,
): void {
  if (client.redirect_uris.length === 0) throw new InvalidClientMetadataError('redirect_uris must not be empty');
  for (const uri of client.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) throw new InvalidClientMetadataError(`redirect_uri ${JSON.stringify(uri)}: ${problem}`);
  }
  const grants = client.grant_types ?? ['authorization_code'];
  const unsupported = grants.filter((g) => g !== 'authorization_code' && g !== 'refresh_token');
  if (unsupported.length > 0)
    throw new InvalidClientMetadataError(`unsupported grant_types: ${unsupported.join(', ')}`);
  if (!(client.response_types ?? ['code']).every((r) => r === 'code')) {
    throw new InvalidClientMetadataError('only the response type "code" is supported');
  }
}

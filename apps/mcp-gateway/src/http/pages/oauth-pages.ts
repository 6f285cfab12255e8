import type { Response } from 'express';
import { PAGE_CSP, pageTemplate, renderPage, type PageTemplate } from './render';

/**
 * The OAuth pages in the shared layout: consent, the
 * authorizations list, and the error page of both. Forms post back to the
 * gateway with the session's CSRF token; nothing needs JavaScript.
 */
const templates: Readonly<Record<OAuthPage, PageTemplate>> = {
  consent: pageTemplate(`<h1>Authorize {{clientName}}?</h1>
<p><strong>{{clientName}}</strong>
{{#if verifiedDomain}}<span class="badge">from {{verifiedDomain}}</span>{{else}}<span class="badge">unverified: self-registered</span>{{/if}}
wants to use
{{#if isAgent}}the agent <strong>{{agentName}}</strong> ({{agentTitle}}){{else}}dagu-mcp's MCP endpoint{{/if}}
as <strong>{{username}}</strong> ({{role}}).</p>
{{#if isAgent}}<p>The agent's tools:</p>
<ul class="tools">
{{#each agentTools}}<li><code>{{name}}</code>{{#if title}}: {{title}}{{/if}}</li>{{/each}}
</ul>{{/if}}
<p>It will act with {{authority}}.</p>
<p class="muted">After you decide, you go back to <code>{{redirectHost}}</code>.</p>
<form method="post" action="{{action}}">
<fieldset class="scopes">
<legend>It will be allowed to (untick what you do not want to grant):</legend>
{{#each scopes}}<div><label><input type="checkbox" name="scope" value="{{name}}" checked> <code>{{name}}</code>: {{description}}</label></div>{{/each}}
</fieldset>
{{#if dropped}}<p class="muted">Not granted, as your role does not allow it:
{{#each dropped}}<code>{{name}}</code> {{/each}}</p>{{/if}}
<input type="hidden" name="csrf" value="{{csrfToken}}">
<input type="hidden" name="request" value="{{pendingId}}">
<div class="actions">
<button type="submit" name="decision" value="allow">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>
<p class="muted">You can revoke it later on <a href="{{basePath}}/oauth/authorizations">Authorized applications</a>.</p>`),
  authorizations: pageTemplate(`<h1>Authorized applications</h1>
<p class="muted">Signed in as <strong>{{username}}</strong>.{{#if isAdmin}} As an admin you may
<a href="?user=all">see everyone's</a>.{{/if}}</p>
{{#if empty}}<p>No application is authorized.</p>{{else}}
<table>
<thead><tr><th scope="col">Application</th>{{#if showUser}}<th scope="col">User</th>{{/if}}<th scope="col">Scopes</th><th scope="col">Authorized</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>
{{#each grants}}<tr>
<td>{{clientName}}<br><code class="muted">{{clientId}}</code></td>
{{#if ../showUser}}<td>{{username}}</td>{{/if}}
<td>{{#each scopes}}<code>{{this}}</code> {{/each}}</td>
<td>{{authorizedAt}}</td>
<td>{{#if lastUsedAt}}{{lastUsedAt}}{{else}}never{{/if}}</td>
<td><form method="post" action="{{../action}}">
<input type="hidden" name="csrf" value="{{../csrfToken}}">
<input type="hidden" name="clientId" value="{{clientId}}">
<input type="hidden" name="user" value="{{userId}}">
<input type="hidden" name="filter" value="{{../userFilter}}">
<button type="submit" class="danger" aria-label="Revoke {{clientName}}">Revoke</button>
</form></td>
</tr>{{/each}}
</tbody>
</table>{{/if}}
<form method="post" action="{{basePath}}/signout"><input type="hidden" name="csrf" value="{{csrfToken}}">
<button type="submit" class="secondary">Sign out</button></form>`),
  'oauth-error': pageTemplate(`<h1>{{title}}</h1>
<p class="error" role="alert">{{message}}</p>`),
};

/** The OAuth page templates. */
export type OAuthPage = 'consent' | 'authorizations' | 'oauth-error';

/**
 * Renders an OAuth page. `formTarget` (the consent page): the origin or scheme
 * the form's answer redirects to, added to CSP `form-action` (browsers apply it
 * to the redirect after a form post).
 */
export function renderOAuthPage(
  res: Response,
  page: OAuthPage,
  context: { title: string; basePath: string } & Record<string, unknown>,
  options: { status?: number; formTarget?: string } = {},
): void {
  const csp =
    options.formTarget === undefined
      ? PAGE_CSP
      : PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${options.formTarget}`);
  renderPage(res, templates[page], context, {
    ...(options.status !== undefined ? { status: options.status } : {}),
    csp,
  });
}

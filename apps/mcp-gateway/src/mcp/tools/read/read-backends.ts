import { DaguError, type Principal } from '@dagu-mcp/contracts';
import type { ReferenceTopic } from '../../../reference/reference-topics';
import type { ReadRequest } from './read-input';
import type { ReadTarget } from './read-targets';

/** Reads one target's `data` (021 §Minimum data models). Throws `DaguError` on failure. */
export type ReadBackend = (request: ReadRequest, principal: Principal) => Promise<Record<string, unknown>>;

/** One backend per resolved target. */
export type ReadBackends = Readonly<Record<ReadTarget, ReadBackend>>;

/** `references`: the reference collection model (021): `items[] {name, uri, mimeType, title, description}`. */
export function referencesBackend(topics: ReadonlyMap<string, ReferenceTopic>): ReadBackend {
  const items = [...topics.values()].map((t) => ({
    name: t.name,
    uri: t.uri,
    mimeType: t.mimeType,
    title: t.title,
    description: t.description,
  }));
  return async () => ({ items });
}

/**
 * `reference`: one topic, `{name, uri, title, mimeType: 'text/markdown', text}`.
 * @throws DaguError `resource_not_found` for a topic the server does not advertise
 */
export function referenceBackend(topics: ReadonlyMap<string, ReferenceTopic>): ReadBackend {
  return async (request) => {
    const name = request.fields.name ?? 'authoring';
    const topic = topics.get(name);
    if (topic === undefined) {
      throw new DaguError(
        'resource_not_found',
        `Reference topic ${name} does not exist. Topics: ${[...topics.keys()].join(', ')}.`,
        {
          details: { topics: [...topics.keys()] },
        },
      );
    }
    return { name: topic.name, uri: topic.uri, title: topic.title, mimeType: topic.mimeType, text: topic.text };
  };
}

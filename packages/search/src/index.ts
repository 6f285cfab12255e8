/**
 * Search and listing helpers shared by the services (spec 021 search and
 * collection models): the keyset cursor codec and its three uses, and line
 * snippets of search results.
 */
export * from './keyset-cursor';
export * from './dag-search-cursor';
export * from './wiki-search-cursor';
export * from './runs-cursor';
export * from './line-snippets';

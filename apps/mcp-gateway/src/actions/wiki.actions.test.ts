import {
  checkWikiChange,
  deleteWikiPage,
  getWikiPage,
  listWikiPages,
  putWikiPage,
  renameWikiPage,
  searchWiki,
} from './wiki.actions';
import { as, UnreachableBus } from './unreachable-bus.test-support';

const pageRef = { workspace: 'team', path: 'runbooks/deploy' };

describe('wiki actions: the role is checked before the bus (dagu-model §9)', () => {
  it('refuses a viewer every page write, with no bus call', async () => {
    const bus = new UnreachableBus();
    const viewer = as('viewer');
    const attempts = [
      putWikiPage(bus, viewer, { ...pageRef, content: '# Deploy\n' }),
      deleteWikiPage(bus, viewer, pageRef),
      renameWikiPage(bus, viewer, { ...pageRef, newPath: 'runbooks/ship' }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
  });

  it('lets a viewer read, search and preview (wiki.check)', async () => {
    const bus = new UnreachableBus();
    const viewer = as('viewer');
    const reads = [
      listWikiPages(bus, viewer, {}),
      getWikiPage(bus, viewer, pageRef),
      searchWiki(bus, viewer, { search: 'deploy' }),
      checkWikiChange(bus, viewer, { kind: 'delete', ...pageRef }),
    ];
    for (const read of reads) await expect(read).rejects.toMatchObject({ code: 'resource_unavailable' });
    expect(bus.ops).toEqual(['wiki.list', 'wiki.get', 'wiki.search', 'wiki.check']);
  });
});

import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { removeHome, startServer } from '../helpers/server.js';
import { openDb } from '../../src/shared/store/db.js';

test('svc serve applies trash retention when it starts: an item past its days is gone, a recent one stays', async () => {
  let server = await startServer();
  const home = server.home;
  try {
    const a = await api(server.port, 'POST', '/api/sessions', { title: 'old one' });
    const b = await api(server.port, 'POST', '/api/sessions', { title: 'recent one' });
    const oldItem = (await api(server.port, 'DELETE', `/api/sessions/${a.body.id}`)).body
      .trash_id as string;
    const recentItem = (await api(server.port, 'DELETE', `/api/sessions/${b.body.id}`)).body
      .trash_id as string;
    await server.stop();

    // The first item was deleted 15 days ago, past the default retention of 14.
    const db = openDb(join(home, 'svc.db'));
    db.prepare('UPDATE trash SET deleted_at = ? WHERE id = ?').run(
      new Date(Date.now() - 15 * 24 * 3600_000).toISOString(),
      oldItem,
    );
    db.close();

    server = await startServer({ home });
    const ids = (await api(server.port, 'GET', '/api/trash')).body.items.map(
      (i: { id: string }) => i.id,
    );
    assert.equal(ids, [recentItem]);
    assert.match(server.output(), /trash retention removed items/);
  } finally {
    await server.stop();
    removeHome(home);
  }
});

test.run();

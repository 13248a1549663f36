import type { Database } from 'better-sqlite3';

/** Versioned schema changes, applied in order, each exactly once. Append; never edit a shipped one. */
export interface Migration {
  version: number;
  name: string;
  up: (db: Database) => void;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'meta',
    up: (db) => {
      db.exec(`CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
    },
  },
  {
    version: 2,
    name: 'sessions, messages, artifacts, goals',
    up: (db) => {
      db.exec(`CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        model_id TEXT,
        reasoning_effort TEXT NOT NULL CHECK (reasoning_effort IN ('off','low','medium','high','xhigh','max')),
        show_reasoning INTEGER NOT NULL CHECK (show_reasoning IN (0,1)),
        permission_mode TEXT NOT NULL CHECK (permission_mode IN ('interactive','auto','strict')),
        working_dir TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0
      ) STRICT`);
      db.exec('CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC)');
      db.exec(`CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user','assistant','tool','system')),
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, seq)
      ) STRICT`);
      db.exec(`CREATE TABLE artifacts (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mime TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (session_id, path)
      ) STRICT`);
      db.exec(`CREATE TABLE goals (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        objective TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active','paused','complete','blocked','budget_limited')),
        token_budget INTEGER,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        turns INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
    },
  },
  {
    version: 3,
    name: 'trash',
    up: (db) => {
      // One row per deleted thing of any kind; payload holds what restores it, blob=1 means
      // its bytes sit in $SVC_HOME/trash/<id>/.
      db.exec(`CREATE TABLE trash (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        original TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        deleted_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        blob INTEGER NOT NULL DEFAULT 0 CHECK (blob IN (0,1))
      ) STRICT`);
      db.exec('CREATE INDEX trash_by_deleted ON trash (deleted_at DESC, id DESC)');
    },
  },
  {
    version: 4,
    name: 'turns',
    up: (db) => {
      // One row per turn, so a turn that died with its worker is still on record as failed.
      db.exec(`CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
        origin TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        error TEXT,
        usage TEXT
      ) STRICT`);
      db.exec('CREATE INDEX turns_by_session ON turns (session_id, started_at)');
    },
  },
  {
    version: 5,
    name: 'uploads',
    up: (db) => {
      // One row per file in $SVC_HOME/uploads/; `name` is the file's name there.
      db.exec(`CREATE TABLE uploads (
        name TEXT PRIMARY KEY,
        original_name TEXT NOT NULL,
        mime TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT`);
      db.exec('CREATE INDEX uploads_by_created ON uploads (created_at DESC, name DESC)');
    },
  },
  {
    version: 6,
    name: 'file_reads',
    up: (db) => {
      // What each session last read of a file (absolute path), so write_file/edit_file can refuse
      // to overwrite a file the agent has not seen or that changed since it looked.
      db.exec(`CREATE TABLE file_reads (
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        read_at TEXT NOT NULL,
        PRIMARY KEY (session_id, path)
      ) STRICT`);
      db.exec('CREATE INDEX file_reads_by_path ON file_reads (path)');
    },
  },
  {
    version: 7,
    name: 'tasks',
    up: (db) => {
      // One table for every kind of task ('graph' now, 'cron' later): status and kind are checked
      // by the app per kind, and kind-specific fields go in `data` (JSON), so a new kind needs no
      // table rebuild. blocked_by is a JSON array of task ids.
      db.exec(`CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        blocked_by TEXT NOT NULL DEFAULT '[]',
        owner_session TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
      db.exec('CREATE INDEX tasks_by_kind ON tasks (kind, created_at, id)');
      db.exec('CREATE INDEX tasks_by_owner ON tasks (owner_session, created_at, id)');
    },
  },
  {
    version: 8,
    name: 'permission_grants',
    up: (db) => {
      // "Allow for this session" answers: the tool and what it touched (command, path or URL).
      db.exec(`CREATE TABLE permission_grants (
        session_id TEXT NOT NULL,
        grant_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, grant_key)
      ) STRICT`);
    },
  },
  {
    version: 10,
    name: 'session_network',
    up: (db) => {
      // The sandbox's network for the session: 'on', 'off' or a JSON host list; NULL follows permissions.yml.
      db.exec('ALTER TABLE sessions ADD COLUMN network TEXT');
    },
  },
  {
    version: 11,
    name: 'skills_workflows',
    up: (db) => {
      // A skill's on/off switch (absent = enabled); the skill itself lives on disk.
      db.exec(`CREATE TABLE skill_state (
        name TEXT PRIMARY KEY,
        enabled INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
      // One row per workflow run; its messages live in the run's session.
      db.exec(`CREATE TABLE workflow_runs (
        id TEXT PRIMARY KEY,
        workflow TEXT NOT NULL,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        inputs TEXT NOT NULL DEFAULT '{}',
        steps TEXT NOT NULL DEFAULT '{}',
        error TEXT,
        failed_step TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT
      ) STRICT`);
      db.exec('CREATE INDEX workflow_runs_by_name ON workflow_runs (workflow, started_at)');
    },
  },
  {
    version: 12,
    name: 'turn_outcomes',
    up: (db) => {
      // What GET /api/sessions/{id}/turns/{turn_id} answers after ?wait=false: the turn's first
      // message, its reply and why it ended, as the waiting call would have said.
      db.exec('ALTER TABLE turns ADD COLUMN first_seq INTEGER');
      db.exec('ALTER TABLE turns ADD COLUMN reply TEXT');
      db.exec('ALTER TABLE turns ADD COLUMN stop_reason TEXT');
      db.exec('ALTER TABLE turns ADD COLUMN reason TEXT');
    },
  },
  {
    version: 13,
    name: 'channels',
    up: (db) => {
      // The platform whose chat a session is (NULL for sessions made anywhere else).
      db.exec('ALTER TABLE sessions ADD COLUMN channel TEXT');
      // Each chat and the session it talks to now (/new points it at a fresh one).
      db.exec(`CREATE TABLE channel_chats (
        platform TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        session_id TEXT,
        last_message_at TEXT NOT NULL,
        PRIMARY KEY (platform, chat_id)
      ) STRICT`);
      // Users the operator approved by pairing code (allowed_users in config.yml are the others).
      db.exec(`CREATE TABLE channel_users (
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        approved_at TEXT NOT NULL,
        PRIMARY KEY (platform, user_id)
      ) STRICT`);
      db.exec(`CREATE TABLE channel_pairings (
        code TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        user_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected')),
        created_at TEXT NOT NULL,
        answered_at TEXT
      ) STRICT`);
      db.exec(
        'CREATE INDEX channel_pairings_by_user ON channel_pairings (platform, user_id, status)',
      );
      // Every inbound message, so one that arrives twice (a worker killed before the platform
      // heard it was taken) is neither lost nor answered twice.
      db.exec(`CREATE TABLE channel_inbound (
        platform TEXT NOT NULL,
        msg_key TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('received','started','answered')),
        text TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        reply_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (platform, msg_key)
      ) STRICT`);
      db.exec(
        "CREATE INDEX channel_inbound_open ON channel_inbound (platform, status) WHERE status != 'answered'",
      );
    },
  },
  {
    version: 14,
    name: 'cron_tasks',
    up: (db) => {
      // Scheduled tasks (kind "cron" on /api/tasks). sched_from: scheduled times after it count
      // as due (moved on each fire, and on create, re-enable and schedule change).
      db.exec(`CREATE TABLE cron_tasks (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        schedule TEXT NOT NULL,
        timezone TEXT NOT NULL,
        prompt TEXT,
        workflow TEXT,
        inputs TEXT NOT NULL DEFAULT '{}',
        enabled INTEGER NOT NULL,
        model TEXT,
        working_dir TEXT,
        permission_mode TEXT NOT NULL,
        session_mode TEXT NOT NULL,
        reuse_session_id TEXT,
        notify TEXT NOT NULL DEFAULT '[]',
        max_runtime_seconds INTEGER NOT NULL,
        catch_up INTEGER NOT NULL,
        approval_timeout_seconds INTEGER,
        sched_from TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT`);
      db.exec(`CREATE TABLE cron_runs (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        trigger TEXT NOT NULL,
        scheduled_for TEXT,
        status TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        error TEXT,
        reply TEXT,
        deadline_at TEXT NOT NULL,
        notify_results TEXT NOT NULL DEFAULT '[]',
        approvals TEXT NOT NULL DEFAULT '[]'
      ) STRICT`);
      db.exec('CREATE INDEX cron_runs_by_task ON cron_runs (task_id, started_at)');
      // Runs never overlap, across processes and crashes: one running row per task.
      db.exec(
        "CREATE UNIQUE INDEX cron_runs_one_running ON cron_runs (task_id) WHERE status = 'running'",
      );
      // A scheduled time fires once, even when a worker dies and comes back.
      db.exec(
        'CREATE UNIQUE INDEX cron_runs_once ON cron_runs (task_id, scheduled_for) WHERE scheduled_for IS NOT NULL',
      );
    },
  },
  // --- longs (issue 22) ---
  {
    version: 16,
    name: 'trash_by_reference',
    up: (db) => {
      // A deleted session stays where it is, marked with its trash item's id, instead of being
      // copied into trash.payload: deleting costs the same at 10 or 50,000 messages.
      db.exec('ALTER TABLE sessions ADD COLUMN trash_id TEXT');
      // The bytes of a session's transcript, kept as messages arrive, so the trash can size a
      // session without reading it. NULL (sessions from before v16, or re-keyed ones) means
      // unknown: the trash counts those once.
      db.exec('ALTER TABLE sessions ADD COLUMN content_bytes INTEGER');
      db.exec(`CREATE TRIGGER sessions_bytes_start AFTER INSERT ON sessions WHEN new.content_bytes IS NULL AND new.message_count = 0
        BEGIN UPDATE sessions SET content_bytes = 0 WHERE id = new.id; END`);
      db.exec(`CREATE TRIGGER messages_bytes_add AFTER INSERT ON messages
        BEGIN UPDATE sessions SET content_bytes = content_bytes + octet_length(new.content) WHERE id = new.session_id; END`);
      // The session list reads only live sessions, in the order of the old index.
      db.exec(
        'CREATE INDEX sessions_live_by_created ON sessions (created_at DESC, id DESC) WHERE trash_id IS NULL',
      );
      // Whichever way a session's trash item leaves (deleted, emptied, expired), the session
      // goes with it; a restore clears trash_id first, so it stays.
      db.exec(`CREATE TRIGGER trash_purges_session AFTER DELETE ON trash WHEN old.kind = 'session'
        BEGIN DELETE FROM sessions WHERE id = old.original AND trash_id = old.id; END`);
      // Retention and the total read (deleted_at, size) from an index, never the payloads.
      db.exec('CREATE INDEX trash_by_age_size ON trash (deleted_at, id, size_bytes, blob)');
      // The agent finds a session's latest compaction summary without reading its transcript.
      db.exec(
        "CREATE INDEX messages_summaries ON messages (session_id, seq) WHERE role = 'system'",
      );
      // Start-up finds turns left running without scanning every turn.
      db.exec("CREATE INDEX turns_running ON turns (status) WHERE status = 'running'");
    },
  },
  // --- wxmedia (issue 14) ---
  {
    version: 18,
    name: 'channel_inbound_files',
    up: (db) => {
      // The files a channel message brought (as the platform named them, then the upload each
      // became), so a worker killed before the turn started starts it with them.
      db.exec("ALTER TABLE channel_inbound ADD COLUMN files TEXT NOT NULL DEFAULT '[]'");
    },
  },
  // --- usage (issue 33) ---
  {
    version: 19,
    name: 'usage_records',
    up: (db) => {
      // One row per model call. No foreign keys: a deleted (purged) session keeps what it spent.
      // Token columns are NULL when the provider reported nothing (unknown, never guessed);
      // estimated_tokens is the pre-call bound (input by characters / 4, plus the output cap)
      // that budgets count for such a call.
      db.exec(`CREATE TABLE usage_records (
        id TEXT PRIMARY KEY,
        at TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        model_id TEXT,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        origin TEXT NOT NULL,
        channel TEXT,
        cron_task TEXT,
        workflow_run TEXT,
        status TEXT NOT NULL CHECK (status IN ('ok','error','interrupted')),
        streamed INTEGER NOT NULL CHECK (streamed IN (0,1)),
        input_tokens INTEGER,
        cached_input_tokens INTEGER,
        cache_write_tokens INTEGER,
        output_tokens INTEGER,
        reasoning_tokens INTEGER,
        estimated_tokens INTEGER NOT NULL,
        cost_usd REAL,
        latency_ms INTEGER NOT NULL
      ) STRICT`);
      db.exec('CREATE INDEX usage_by_time ON usage_records (at)');
      db.exec('CREATE INDEX usage_by_session ON usage_records (session_id, at)');
      db.exec(
        'CREATE INDEX usage_by_cron_task ON usage_records (cron_task, at) WHERE cron_task IS NOT NULL',
      );
      db.exec(
        'CREATE INDEX usage_by_channel ON usage_records (channel, at) WHERE channel IS NOT NULL',
      );
      // A usage.warning goes out once per limit and period: the first process to insert sends it.
      db.exec(`CREATE TABLE usage_warnings (
        limit_key TEXT NOT NULL,
        period TEXT NOT NULL,
        sent_at TEXT NOT NULL,
        PRIMARY KEY (limit_key, period)
      ) STRICT`);
    },
  },
  {
    version: 20,
    name: 'usage_totals',
    up: (db) => {
      // What each budget scope spent per period, kept as records are written, so the check
      // before every model call reads one row instead of summing a growing history. Keys: `all`
      // (periods: a UTC day YYYY-MM-DD and a month YYYY-MM), `session:<id>` (period `life`),
      // `cron_task:<id>` and `channel:<platform>` (UTC days). Tokens as budgets count them
      // (reported, else the estimate unless the call failed); usd over priced calls.
      db.exec(`CREATE TABLE usage_totals (
        key TEXT NOT NULL,
        period TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        usd REAL NOT NULL,
        PRIMARY KEY (key, period)
      ) STRICT, WITHOUT ROWID`);
      const counted = `COALESCE(input_tokens + cached_input_tokens + cache_write_tokens + output_tokens,
        CASE WHEN status = 'error' THEN 0 ELSE estimated_tokens END)`;
      const fill = (key: string, period: string, where = '') =>
        db.exec(`INSERT INTO usage_totals (key, period, tokens, usd)
          SELECT ${key}, ${period}, SUM(${counted}), TOTAL(cost_usd) FROM usage_records ${where}
          GROUP BY 1, 2`);
      fill("'all'", 'substr(at, 1, 10)');
      fill("'all'", 'substr(at, 1, 7)');
      fill("'session:' || session_id", "'life'", 'WHERE session_id IS NOT NULL');
      fill("'cron_task:' || cron_task", 'substr(at, 1, 10)', 'WHERE cron_task IS NOT NULL');
      fill("'channel:' || channel", 'substr(at, 1, 10)', 'WHERE channel IS NOT NULL');
    },
  },
  // --- search (issue 36) ---
  {
    version: 21,
    name: 'search_index',
    up: (db) => {
      // One row per searchable thing (a message's words, its tool calls or output, a session's
      // title, a goal, an artifact's name, later files): what a result shows and is filtered by.
      // Its text is what svc_search_text kept (scrubbed, capped); search_fts indexes it without
      // a second copy (external content).
      db.exec(`CREATE TABLE search_docs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        ref TEXT NOT NULL,
        session_id TEXT,
        role TEXT,
        origin TEXT,
        created_at TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL DEFAULT '',
        stamp TEXT,
        UNIQUE (ref, kind)
      ) STRICT`);
      db.exec(`CREATE VIRTUAL TABLE search_fts USING fts5(title, body, content='search_docs',
        content_rowid='id', tokenize='unicode61 remove_diacritics 2')`);
      // A word in a title weighs twice one in a body.
      db.exec("INSERT INTO search_fts (search_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)')");
      db.exec(`CREATE TRIGGER search_docs_add AFTER INSERT ON search_docs
        BEGIN INSERT INTO search_fts (rowid, title, body) VALUES (new.id, new.title, new.body); END`);
      db.exec(`CREATE TRIGGER search_docs_drop AFTER DELETE ON search_docs
        BEGIN INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END`);
      db.exec(`CREATE TRIGGER search_docs_text AFTER UPDATE OF title, body ON search_docs
        BEGIN
          INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
          INSERT INTO search_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
        END`);
      // The tables' own triggers keep the index in each write's transaction, whoever writes.
      // The origin of a message is its session's newest turn's by then (none, e.g. an import: NULL).
      // `LIMIT 1` keeps SQLite from inlining the subquery (which would call the function twice).
      const origin = `(SELECT origin FROM turns WHERE session_id = new.session_id
        AND started_at <= new.created_at ORDER BY started_at DESC LIMIT 1)`;
      const addPart = (part: 'message' | 'tool') => `INSERT INTO search_docs
          (kind, ref, session_id, role, origin, created_at, body)
        SELECT '${part}', new.id, new.session_id, new.role, ${origin}, new.created_at, b
        FROM (SELECT svc_search_text('${part}', new.role, new.content) AS b LIMIT 1) WHERE b IS NOT NULL;`;
      db.exec(`CREATE TRIGGER messages_search_add AFTER INSERT ON messages
        WHEN new.role IN ('user', 'assistant', 'tool')
        BEGIN ${addPart('message')} ${addPart('tool')} END`);
      db.exec(`CREATE TRIGGER messages_search_drop AFTER DELETE ON messages
        BEGIN DELETE FROM search_docs WHERE ref = old.id AND kind IN ('message', 'tool'); END`);
      db.exec(`CREATE TRIGGER messages_search_move AFTER UPDATE OF session_id ON messages
        BEGIN UPDATE search_docs SET session_id = new.session_id WHERE ref = new.id AND kind IN ('message', 'tool'); END`);
      // A session's title; a trashed session stays indexed and its results are hidden by the
      // search (sessions.trash_id), so a restore brings them back without re-indexing anything.
      db.exec(`CREATE TRIGGER sessions_search_add AFTER INSERT ON sessions
        BEGIN INSERT INTO search_docs (kind, ref, session_id, created_at, title)
          VALUES ('session', new.id, new.id, new.created_at, coalesce(svc_search_text('plain', NULL, new.title), '')); END`);
      db.exec(`CREATE TRIGGER sessions_search_title AFTER UPDATE OF title ON sessions
        WHEN old.title IS NOT new.title
        BEGIN UPDATE search_docs SET title = coalesce(svc_search_text('plain', NULL, new.title), '')
          WHERE ref = new.id AND kind = 'session'; END`);
      db.exec(`CREATE TRIGGER sessions_search_drop AFTER DELETE ON sessions
        BEGIN DELETE FROM search_docs WHERE ref = old.id AND kind = 'session'; END`);
      db.exec(`CREATE TRIGGER goals_search_add AFTER INSERT ON goals
        BEGIN INSERT INTO search_docs (kind, ref, session_id, created_at, body)
          VALUES ('goal', new.session_id, new.session_id, new.created_at, coalesce(svc_search_text('plain', NULL, new.objective), '')); END`);
      db.exec(`CREATE TRIGGER goals_search_edit AFTER UPDATE OF objective, session_id ON goals
        WHEN old.objective IS NOT new.objective OR old.session_id IS NOT new.session_id
        BEGIN UPDATE search_docs SET ref = new.session_id, session_id = new.session_id,
          body = coalesce(svc_search_text('plain', NULL, new.objective), '')
          WHERE ref = old.session_id AND kind = 'goal'; END`);
      db.exec(`CREATE TRIGGER goals_search_drop AFTER DELETE ON goals
        BEGIN DELETE FROM search_docs WHERE ref = old.session_id AND kind = 'goal'; END`);
      db.exec(`CREATE TRIGGER artifacts_search_add AFTER INSERT ON artifacts
        BEGIN INSERT INTO search_docs (kind, ref, session_id, created_at, title)
          VALUES ('artifact', new.id, new.session_id, new.created_at, coalesce(svc_search_text('plain', NULL, new.path), '')); END`);
      db.exec(`CREATE TRIGGER artifacts_search_edit AFTER UPDATE OF path, session_id ON artifacts
        WHEN old.path IS NOT new.path OR old.session_id IS NOT new.session_id
        BEGIN UPDATE search_docs SET session_id = new.session_id,
          title = coalesce(svc_search_text('plain', NULL, new.path), '')
          WHERE ref = new.id AND kind = 'artifact'; END`);
      db.exec(`CREATE TRIGGER artifacts_search_drop AFTER DELETE ON artifacts
        BEGIN DELETE FROM search_docs WHERE ref = old.id AND kind = 'artifact'; END`);
      // Rows from before the index: the supervisor indexes them in the background, in batches up
      // to each table's newest rowid now (later rows come through the triggers).
      const upto = (t: string) =>
        (db.prepare(`SELECT coalesce(max(rowid), 0) AS n FROM ${t}`).get() as { n: number }).n;
      const count = (t: string) =>
        (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
      const tables = ['sessions', 'goals', 'artifacts', 'messages'] as const;
      const state = {
        tables: Object.fromEntries(tables.map((t) => [t, { next: 0, upto: upto(t) }])),
        total: tables.reduce((s, t) => s + count(t), 0),
        done: 0,
      };
      if (state.total > 0)
        db.prepare(
          "INSERT INTO meta (key, value, updated_at) VALUES ('search_backfill', ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        ).run(JSON.stringify(state), new Date().toISOString());
    },
  },
  {
    version: 22,
    name: 'search_queue',
    up: (db) => {
      // FTS5 writes a segment at every commit (≈ 0.3 ms), several times a turn's own writes: a new
      // message now only leaves its rowid here, in its own transaction, and its words go into the
      // index in batches: before every search (so a search never misses a committed message) and
      // from the supervisor within a second. Deletes, titles, trash and restore stay immediate.
      db.exec('CREATE TABLE search_queue (msg INTEGER PRIMARY KEY) STRICT');
      db.exec('DROP TRIGGER messages_search_add');
      db.exec(`CREATE TRIGGER messages_search_add AFTER INSERT ON messages
        WHEN new.role IN ('user', 'assistant', 'tool')
        BEGIN INSERT OR IGNORE INTO search_queue (msg) VALUES (new.rowid); END`);
      db.exec('DROP TRIGGER messages_search_drop');
      db.exec(`CREATE TRIGGER messages_search_drop AFTER DELETE ON messages
        BEGIN
          DELETE FROM search_queue WHERE msg = old.rowid;
          DELETE FROM search_docs WHERE ref = old.id AND kind IN ('message', 'tool');
        END`);
    },
  },
  {
    version: 23,
    name: 'search_mark',
    up: (db) => {
      // Even the queue's row cost a turn 9-14 % more store time (bench/search): a new message
      // now costs the index nothing at all. The index keeps a mark instead, the newest message
      // rowid it has taken; what lies above it is indexed before every search and by the
      // supervisor. SQLite gives a new row max(rowid) + 1, so the one way a new message could
      // land at or below the mark is when the newest rows were deleted: a delete brings the
      // mark down to the newest rowid left.
      db.exec(`CREATE TABLE search_mark (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        msg INTEGER NOT NULL
      ) STRICT`);
      db.exec(`INSERT INTO search_mark (id, msg) VALUES (1, coalesce(
        (SELECT min(msg) - 1 FROM search_queue),
        (SELECT max(rowid) FROM messages), 0))`);
      db.exec('DROP TRIGGER messages_search_add');
      db.exec('DROP TRIGGER messages_search_drop');
      db.exec('DROP TABLE search_queue');
      db.exec(`CREATE TRIGGER messages_search_drop AFTER DELETE ON messages
        BEGIN
          DELETE FROM search_docs WHERE ref = old.id AND kind IN ('message', 'tool');
          UPDATE search_mark SET msg = (SELECT coalesce(max(rowid), 0) FROM messages)
            WHERE msg > (SELECT coalesce(max(rowid), 0) FROM messages);
        END`);
    },
  },
  {
    version: 24,
    name: 'attachment original names',
    up: (db) => {
      // A user message's attachments now carry the name the person sent (`original_name`); those
      // recorded before take it from the uploads table, or, for a file no longer on record, from
      // the stored name without its unique prefix (`20261127-150805-w2l8fi_notes.txt`).
      const uploads = db.prepare('SELECT original_name FROM uploads WHERE name = ?');
      const update = db.prepare('UPDATE messages SET content = ? WHERE rowid = ?');
      const rows = db
        .prepare(
          `SELECT rowid AS id, content FROM messages WHERE role = 'user' AND content LIKE '%"attachments"%'`,
        )
        .all() as Array<{ id: number; content: string }>;
      for (const row of rows) {
        let content: { attachments?: unknown };
        try {
          content = JSON.parse(row.content) as { attachments?: unknown };
        } catch {
          continue;
        }
        if (!Array.isArray(content.attachments)) continue;
        let changed = false;
        for (const a of content.attachments as Array<Record<string, unknown>>) {
          if (!a || typeof a !== 'object' || typeof a.name !== 'string' || a.original_name)
            continue;
          const known = uploads.get(a.name) as { original_name: string } | undefined;
          a.original_name =
            known?.original_name ?? /^\d{8}-\d{6}-[0-9a-z]{6}_(.+)$/.exec(a.name)?.[1] ?? a.name;
          changed = true;
        }
        if (changed) update.run(JSON.stringify(content), row.id);
      }
    },
  },
];

/** Applies pending migrations in one transaction each; returns the versions it applied. */
export function migrate(db: Database, list: Migration[] = migrations): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((r) => (r as { version: number }).version),
  );
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...list.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `svc.db has schema version ${newest}, newer than this svc knows (${known}); upgrade svc or restore a backup`,
    );
  }
  const done: number[] = [];
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      m.up(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
    done.push(m.version);
  }
  return done;
}

import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/**
 * better-sqlite3's Database class for this runtime. 12.x wraps its objects in node::ObjectWrap,
 * and built against Node 24.19+'s headers that wrapper aborts the whole process when the garbage
 * collector frees a statement outside JavaScript (nodejs/node#65446: "Assertion failed: (env) !=
 * nullptr"). 13.x is Node-API and unaffected, but needs Node-API 10, which Node 20 lacks (it
 * crashes there). So 13.x (the `better-sqlite3-napi` alias) wherever Node-API 10 exists (Node
 * 22.14+, 24), 12.x on Node 20. The API is the same.
 */
export const Database: typeof BetterSqlite3 =
  Number(process.versions.napi) >= 10
    ? (require('better-sqlite3-napi') as typeof BetterSqlite3)
    : (require('better-sqlite3') as typeof BetterSqlite3);

export type SqliteDatabase = BetterSqlite3.Database;

/**
 * fast-check: another connection takes and releases cache.db's write lock at random moments while
 * the daemon's thread writes header rows in slices (`writeInSlices`, each slice through
 * `writeWhenFree`). Whatever the timing, every message is written exactly once, whole: as many
 * rows as messages, each with its FTS row, the folder's counter agreeing. (Before, a slice that met
 * a hold waited in SQLite's busy handler, and the hold's end, on a timer of this thread, came only
 * after that wait had failed the write.)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { openCache, waitOnTimers } from "../src/cache/index.js";
import { writeInSlices } from "../src/cache/slices.js";
import { ensureFolder, headerBatch, headerRow } from "../src/cache/store.js";
import { syncedMailboxMessage } from "../src/testing/mailbox-synced.js";

const NOW = new Date(Date.UTC(2026, 0, 15));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("slices written while another connection takes the write lock at random moments", () => {
  it("writes every message once, whole, whatever the timing of the holds", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 120 }),
        fc.array(
          fc.record({ after: fc.integer({ min: 0, max: 15 }), hold: fc.integer({ min: 1, max: 40 }) }),
          {
            maxLength: 6,
          },
        ),
        async (n, holds) => {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-busy-slices-"));
          dirs.push(dir);
          const file = path.join(dir, "cache.db");
          const db = openCache(file);
          const other = new Database(file);
          try {
            waitOnTimers(db);
            const folder = ensureFolder(db, "a", "INBOX", "inbox");
            const rows = Array.from({ length: n }, (_, i) =>
              headerRow(folder, syncedMailboxMessage(i, n, i + 1, NOW).msg),
            );
            const batch = headerBatch(db, folder.id);
            let written = false;
            const writing = writeInSlices(
              db,
              rows,
              {
                begin: (from, to) => batch.begin(rows, from, to),
                write: (r) => {
                  batch.write(r);
                },
                end: () => batch.end(),
                done: () => {
                  written = true;
                },
              },
              // (small slices: many transactions to meet the holds)
              1,
            );
            for (const h of holds) {
              await sleep(h.after);
              if (written) break;
              other.exec("BEGIN IMMEDIATE");
              await sleep(h.hold);
              other.exec("ROLLBACK");
            }
            await writing;
            const count = (sql: string) => other.prepare(sql).pluck().get() as number;
            expect(count("SELECT count(*) FROM messages")).toBe(n);
            expect(count("SELECT count(DISTINCT uid) FROM messages")).toBe(n);
            expect(count("SELECT cached_count FROM folders")).toBe(n);
            const ids = other.prepare("SELECT id FROM messages ORDER BY id").pluck().all();
            const fts = other.prepare("SELECT rowid FROM messages_fts ORDER BY rowid").pluck().all();
            expect(fts).toEqual(ids);
          } finally {
            if (other.inTransaction) other.exec("ROLLBACK");
            other.close();
            db.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);
});

/**
 * An agent pages list_notes with `skip += count` until hasMore is false. Whatever the filter and page
 * size, that loop must end, and the pages together must hold exactly `total` notes, each once: the
 * ones the filter matches.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normaliseTag } from "../src/domain/notes.js";
import { NOTE_STATUSES } from "../src/domain/status.js";
import { type TestApp, testApp } from "./helpers.js";

const CALLER = { scopes: [] };
const TAGS = ["a", "b", "Tech", "c d"];
/** Filter tags as an agent might send them: known ones in other spellings, unknown, blank, too long. */
const FILTER_TAGS = ["a", "B ", "tech", " TECH", "c d", "zzz", "", "   ", "\t", "x".repeat(60)];

/** gaveup: a note the scheduler gave up on, a draft again. */
type Kind = "draft" | "ready" | "evergreen" | "scheduled" | "published" | "gaveup";
interface Made {
  id: string;
  status: Kind;
  tags: string[];
}

const noteArb = fc.record({
  status: fc.constantFrom<Kind>("draft", "ready", "evergreen", "scheduled", "published", "gaveup"),
  tags: fc.subarray(TAGS),
});
const filterArb = fc.record({
  status: fc.option(fc.constantFrom(...NOTE_STATUSES), { nil: undefined }),
  tag: fc.option(fc.constantFrom(...FILTER_TAGS), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 50 }),
});

/**
 * Creates the notes through the domain: the scheduler publishes the "published" ones, then gives up
 * on the "gaveup" ones after the default 8 failed runs (they are drafts again).
 */
async function fill(app: TestApp, notes: ReadonlyArray<{ status: Kind; tags: string[] }>): Promise<Made[]> {
  const made: Made[] = [];
  const toPublish: string[] = [];
  const toFail: string[] = [];
  for (const n of notes) {
    app.time.advance(1000);
    const creatable =
      n.status === "draft" || n.status === "ready" || n.status === "evergreen" ? n.status : "ready";
    const id = (await app.notes.create({ content: "n", tags: n.tags, status: creatable })).id;
    if (n.status === "scheduled") await app.notes.schedule([{ id, scheduledAt: "2030-01-01T00:00:00Z" }]);
    if (n.status === "published") {
      await app.notes.schedule([{ id, scheduledAt: new Date(app.time.now() + 60_000).toISOString() }]);
      toPublish.push(id);
    }
    if (n.status === "gaveup") toFail.push(id);
    made.push({ id, status: n.status === "gaveup" ? "draft" : n.status, tags: n.tags.map(normaliseTag) });
  }
  app.time.advance(10 * 60_000);
  const report = await app.scheduler.publishDue();
  expect(report.published.sort()).toEqual(toPublish.sort());
  if (toFail.length > 0) {
    const at = new Date(app.time.now() + 60_000).toISOString();
    await app.notes.schedule(toFail.map((id) => ({ id, scheduledAt: at })));
    app.publisher.failing = "platform is down";
    const gaveUp: string[] = [];
    for (let run = 0; run < 8; run++) {
      app.time.advance(3_600_000);
      gaveUp.push(...(await app.scheduler.publishDue()).gaveUp);
    }
    expect(gaveUp.sort()).toEqual(toFail.sort());
  }
  return made;
}

interface ListPage {
  notes: Array<{ id: string }>;
  count: number;
  total: number;
  skip: number;
  hasMore: boolean;
}

async function list(app: TestApp, args: Record<string, unknown>): Promise<CallToolResult> {
  return app.kit.callTool("list_notes", args, CALLER);
}

describe("paging list_notes", () => {
  it("ends, and the pages hold exactly `total` matching notes, each once, for any filter and page size", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(noteArb, { maxLength: 40 }), filterArb, async (notes, filter) => {
        const app = await testApp();
        try {
          const made = await fill(app, notes);
          const args = {
            limit: filter.limit,
            ...(filter.status ? { status: filter.status } : {}),
            ...(filter.tag !== undefined ? { tag: filter.tag } : {}),
          };
          if (filter.tag !== undefined && filter.tag.trim() === "") {
            const r = await list(app, { ...args, skip: 0 });
            expect(r.isError).toBe(true);
            expect((r.structuredContent as { error: { reason: string } }).error.reason).toBe(
              "INVALID_ARGUMENT",
            );
            return;
          }
          const tag = filter.tag === undefined ? undefined : normaliseTag(filter.tag);
          const expected = made
            .filter((m) => (filter.status ? m.status === filter.status : true))
            .filter((m) => (tag === undefined ? true : m.tags.includes(tag)))
            .map((m) => m.id);
          const seen: string[] = [];
          let skip = 0;
          let total: number | undefined;
          // A correct pager needs ceil(total / limit) + 1 pages at most; more means it never stops.
          for (let page = 0; ; page++) {
            expect(page).toBeLessThanOrEqual(Math.ceil(expected.length / filter.limit) + 1);
            const r = await list(app, { ...args, skip });
            expect(r.isError).toBeFalsy();
            const p = r.structuredContent as unknown as ListPage;
            expect(p.count).toBe(p.notes.length);
            expect(p.skip).toBe(skip);
            if (p.count === 0) expect(p.hasMore).toBe(false);
            total ??= p.total;
            expect(p.total).toBe(total);
            seen.push(...p.notes.map((n) => n.id));
            if (!p.hasMore) break;
            skip += p.count;
          }
          expect(new Set(seen).size).toBe(seen.length);
          expect(seen.length).toBe(total);
          expect([...seen].sort()).toEqual([...expected].sort());
        } finally {
          await app.close();
        }
      }),
      { numRuns: 80 },
    );
  }, 120_000);
});

/**
 * The server path's page merge (mergePage): paging through several folders' streams, each newest
 * first, with at most `limit` rows taken from each per page and every stream resumed where the last
 * page stopped, gives exactly the one newest-first list of all rows, every row once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergePage } from "../src/service/search/index.js";

type Row = { sortDate: number; id: string };

const streamsArb = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 })
  .chain((keys) =>
    fc.tuple(
      fc.constant(keys),
      fc.tuple(...keys.map(() => fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 40 }))),
    ),
  )
  .map(([keys, dates]) =>
    keys.map((key, i) => ({
      key,
      // newest first within a stream, ties kept in stream order
      rows: [...dates[i]!].sort((a, b) => b - a).map((d, j): Row => ({ sortDate: d, id: `${key}#${j}` })),
    })),
  );

describe("mergePage", () => {
  it("pages through every stream once, newest first, at most limit per page", () => {
    fc.assert(
      fc.property(streamsArb, fc.integer({ min: 1, max: 12 }), (streams, limit) => {
        const pos = new Map(streams.map((s) => [s.key, 0]));
        const seen: Row[] = [];
        const total = streams.reduce((n, s) => n + s.rows.length, 0);
        for (let guard = 0; seen.length < total && guard <= total; guard++) {
          // A page fetches only `limit` rows of each stream from its position.
          const slices = streams.map((s) => ({
            key: s.key,
            rows: s.rows.slice(pos.get(s.key)!, pos.get(s.key)! + limit),
          }));
          const { page, taken } = mergePage(slices, limit);
          expect(page.length).toBe(Math.min(limit, total - seen.length));
          for (const [k, n] of taken) pos.set(k, pos.get(k)! + n);
          seen.push(...page);
        }
        const order = (r: Row) =>
          streams.findIndex((s) => r.id.startsWith(`${s.key}#`) && s.rows.includes(r));
        const want = streams
          .flatMap((s) => s.rows)
          .sort((a, b) => {
            const sa = streams[order(a)]!.key;
            const sb = streams[order(b)]!.key;
            return b.sortDate - a.sortDate || (sa < sb ? -1 : sa > sb ? 1 : 0);
          });
        expect(seen.map((r) => r.id)).toEqual(want.map((r) => r.id));
      }),
      { numRuns: 300 },
    );
  });
});

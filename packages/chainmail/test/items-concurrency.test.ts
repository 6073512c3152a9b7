/**
 * Concurrent calls on one work item over the daemon's socket, each client on its own connection:
 * updates of different fields at once all land (no update lost to another's stale row); a delete
 * racing updates leaves the item either updated-then-deleted or deleted with the later updates
 * refused, never half written; every success is one revision and one event, and a refusal neither.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const clients: DaemonClient[] = [];

beforeAll(async () => {
  env = await startMailEnv();
  for (let i = 0; i < 6; i++)
    clients.push(new DaemonClient({ socketPath: env.home.socketPath, client: i % 2 ? "mcp" : "cli" }));
});
afterAll(async () => {
  for (const c of clients) c.close();
  await env?.stop();
});

type Item = { id: string; title: string; description: string | null; priority: string; state: string };
type Outcome = { ok: true; revision: number } | { ok: false; reason: string };
const outcome = (p: Promise<{ revision: number }>): Promise<Outcome> =>
  p.then(
    (r) => ({ ok: true as const, revision: r.revision }),
    (err: { reason?: string }) => ({ ok: false as const, reason: err.reason ?? String(err) }),
  );
/** A value no other call of a run sets, so no update is a no-op (which keeps its revision). */
const fieldValue = (field: string, i: number) =>
  field === "estimate"
    ? i + 1
    : field === "due_date"
      ? `2026-05-${String(i + 1).padStart(2, "0")}`
      : `${field} ${i}`;
const itemEvents = async (cursor: number, id: string) =>
  (await env.client.readEvents({ cursor, kinds: ["item"], limit: 200 })).events.filter(
    (e) => e.item_id === id,
  );

describe("one item, many connections at once", () => {
  it("updates of different fields all land, each its own revision and event", async () => {
    const made = await env.client.call("item.create", { type: "task", title: "t0", area: "work" });
    const id = made.item.id;
    const start = (await env.client.watchStatus()).last_id;
    const results = await Promise.all([
      outcome(clients[0]!.call("item.update", { id, title: "new title" })),
      outcome(clients[1]!.call("item.update", { id, description: "new description" })),
      outcome(clients[2]!.call("item.update", { id, priority: "p0" })),
      outcome(clients[3]!.call("item.update", { id, state: "in-progress" })),
      outcome(clients[4]!.call("item.update", { id, due_date: "2026-05-01" })),
      outcome(clients[5]!.call("item.update", { id, estimate: 3 })),
    ]);
    expect(results.every((r) => r.ok)).toBe(true);
    const revisions = results.map((r) => (r.ok ? r.revision : 0));
    expect(new Set(revisions).size).toBe(6);
    const got = (await env.client.call("item.get", { id })).item;
    expect(got).toMatchObject({
      title: "new title",
      description: "new description",
      priority: "p0",
      priority_inherited: false,
      state: "in-progress",
      due_date: "2026-05-01",
      estimate: 3,
      revision: Math.max(...revisions),
    });
    const events = await itemEvents(start, id);
    expect(events.map((e) => e.revision).sort()).toEqual([...revisions].sort());
  });

  it("a delete racing updates: every update before it landed, every one after it refused and unwritten (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("title", "description", "due_date", "estimate"), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.nat(),
        async (fields, at) => {
          const made = await env.client.call("item.create", { type: "task", title: "x", area: "work" });
          const id = made.item.id;
          const start = (await env.client.watchStatus()).last_id;
          const deleteAt = at % (fields.length + 1);
          const calls: Array<Promise<Outcome>> = [];
          for (const [i, f] of fields.entries()) {
            if (i === deleteAt) calls.push(outcome(clients[i % clients.length]!.call("item.delete", { id })));
            const value = fieldValue(f, i);
            calls.push(outcome(clients[(i + 1) % clients.length]!.call("item.update", { id, [f]: value })));
          }
          if (deleteAt === fields.length) calls.push(outcome(env.client.call("item.delete", { id })));
          const results = await Promise.all(calls);
          const del = results.find((_, i) => i === deleteAt)!;
          expect(del.ok).toBe(true);
          const deletedAt = del.ok ? del.revision : 0;
          const updates = results.filter((_, i) => i !== deleteAt);
          // An update either landed before the delete or was refused as CONFLICT (deleted).
          for (const u of updates)
            if (u.ok) expect(u.revision).toBeLessThan(deletedAt);
            else expect(u.reason).toBe("CONFLICT");
          const landed = updates.filter((u): u is Extract<Outcome, { ok: true }> => u.ok);
          // The item as the last landed update left it, then deleted: the delete's revision.
          const got = (await env.client.call("item.get", { id })).item as Item & {
            deleted: boolean;
            revision: number;
          };
          expect(got.deleted).toBe(true);
          expect(got.revision).toBe(deletedAt);
          // Each success is one event with its revision, nothing for a refusal.
          const events = await itemEvents(start, id);
          expect(events.map((e) => [e.change, e.revision])).toEqual([
            ...landed.map((u) => ["updated", u.revision]).sort((a, b) => Number(a[1]) - Number(b[1])),
            ["deleted", deletedAt],
          ]);
          // And the fields are those of the landed updates, in revision order: none lost.
          const expected: Record<string, unknown> = {};
          const order = fields
            .map((f, i) => ({ f, i, r: updates[i]! }))
            .filter((x) => x.r.ok)
            .sort((a, b) => (a.r.ok && b.r.ok ? a.r.revision - b.r.revision : 0));
          for (const { f, i } of order) expected[f] = fieldValue(f, i);
          expect(got).toMatchObject(expected);
        },
      ),
      { numRuns: 40 },
    );
  });
});

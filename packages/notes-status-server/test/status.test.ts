import { afterEach, describe, expect, it } from "vitest";
import { NotesError } from "../src/domain/errors.js";
import type { NoteStatus } from "../src/domain/status.js";
import { type TestApp, testApp } from "./helpers.js";

type Action =
  | { kind: "update"; to: "draft" | "ready" | "evergreen" }
  | { kind: "schedule" }
  | { kind: "unschedule"; to: "ready" | "draft" };

const ACTIONS: Action[] = [
  { kind: "update", to: "draft" },
  { kind: "update", to: "ready" },
  { kind: "update", to: "evergreen" },
  { kind: "schedule" },
  { kind: "unschedule", to: "ready" },
  { kind: "unschedule", to: "draft" },
];

/** Written out by hand (not read from TRANSITIONS) so the test checks the table, not itself. */
const EXPECTED: Record<NoteStatus, Record<string, NoteStatus | "refused" | "unchanged">> = {
  draft: {
    "update:draft": "unchanged",
    "update:ready": "ready",
    "update:evergreen": "evergreen",
    schedule: "scheduled",
    "unschedule:ready": "refused",
    "unschedule:draft": "refused",
  },
  ready: {
    "update:draft": "draft",
    "update:ready": "unchanged",
    "update:evergreen": "evergreen",
    schedule: "scheduled",
    "unschedule:ready": "refused",
    "unschedule:draft": "refused",
  },
  evergreen: {
    "update:draft": "draft",
    "update:ready": "ready",
    "update:evergreen": "unchanged",
    schedule: "refused",
    "unschedule:ready": "refused",
    "unschedule:draft": "refused",
  },
  scheduled: {
    "update:draft": "refused",
    "update:ready": "refused",
    "update:evergreen": "refused",
    schedule: "scheduled",
    "unschedule:ready": "ready",
    "unschedule:draft": "draft",
  },
  published: {
    "update:draft": "refused",
    "update:ready": "refused",
    "update:evergreen": "evergreen",
    schedule: "refused",
    "unschedule:ready": "refused",
    "unschedule:draft": "refused",
  },
};

const key = (a: Action) => (a.kind === "schedule" ? "schedule" : `${a.kind}:${a.to}`);

let app: TestApp;
afterEach(async () => {
  await app.close();
});

async function noteIn(status: NoteStatus): Promise<string> {
  if (status === "draft" || status === "ready" || status === "evergreen") {
    return (await app.notes.create({ content: `a ${status} note`, status })).id;
  }
  const id = (await app.notes.create({ content: "to be scheduled", status: "ready" })).id;
  await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
  if (status === "published") {
    app.time.set("2026-03-02T09:00:00Z");
    const report = await app.scheduler.publishDue();
    expect(report.published).toEqual([id]);
    app.time.set("2026-03-02T08:00:00Z");
  }
  return id;
}

async function run(id: string, action: Action) {
  if (action.kind === "update") return await app.notes.update(id, { status: action.to });
  if (action.kind === "schedule")
    return (await app.notes.schedule([{ id, scheduledAt: "2026-03-05T10:00:00Z" }]))[0]!;
  return await app.notes.unschedule(id, action.to);
}

describe("the status state machine", () => {
  for (const from of ["draft", "ready", "evergreen", "scheduled", "published"] as const) {
    for (const action of ACTIONS) {
      const expected = EXPECTED[from][key(action)]!;
      it(`${from} --${key(action)}--> ${expected}`, async () => {
        app = await testApp();
        const id = await noteIn(from);
        if (expected === "refused") {
          let error: unknown;
          try {
            await run(id, action);
          } catch (err) {
            error = err;
          }
          expect(error).toBeInstanceOf(NotesError);
          expect((error as NotesError).reason).toBe("INVALID_TRANSITION");
          expect((error as NotesError).message).toContain(`cannot go from ${from}`);
          expect((await app.notes.get(id)).status).toBe(from);
        } else {
          const note = await run(id, action);
          expect(note.status).toBe(expected === "unchanged" ? from : expected);
          expect((await app.notes.get(id)).status).toBe(note.status);
        }
      });
    }
  }

  it("refuses a NUL character in content or tags, and finds no note by an id with one", async () => {
    app = await testApp();
    await expect(app.notes.create({ content: "a\u0000b" })).rejects.toThrow(
      "content must not contain the NUL character (U+0000)",
    );
    await expect(app.notes.create({ content: "ok", tags: ["x\u0000"] })).rejects.toThrow(
      "A tag must not contain the NUL character (U+0000)",
    );
    const id = (await app.notes.create({ content: "ok" })).id;
    await expect(app.notes.update(id, { content: "\u0000" })).rejects.toThrow(/NUL character/);
    await expect(app.notes.get("\u0000")).rejects.toThrow("Note not found: \u0000");
    await expect(app.notes.delete("\u0000")).rejects.toThrow(
      expect.objectContaining({ reason: "NOT_FOUND" }),
    );
    expect((await app.notes.list({ tag: "\u0000" }, 20, 0)).total).toBe(0);
    expect((await app.notes.list({}, 20, 0)).total).toBe(1);
  });

  it("refuses to create a note as scheduled or published", async () => {
    app = await testApp();
    for (const status of ["scheduled", "published"]) {
      await expect(app.notes.create({ content: "x", status: status as "draft" })).rejects.toThrow(
        /draft, ready or evergreen/,
      );
    }
  });

  it("refuses scheduling in the past or at now, and leaves every note as it was", async () => {
    app = await testApp();
    const a = (await app.notes.create({ content: "a", status: "ready" })).id;
    const b = (await app.notes.create({ content: "b" })).id;
    await expect(
      app.notes.schedule([
        { id: a, scheduledAt: "2026-03-03T09:00:00Z" },
        { id: b, scheduledAt: "2026-03-02T08:00:00Z" },
      ]),
    ).rejects.toThrow(expect.objectContaining({ reason: "PAST_TIME" }));
    expect((await app.notes.get(a)).status).toBe("ready");
    expect((await app.notes.get(a)).scheduledAt).toBeNull();
  });

  it("keeps a published note's content and clears scheduledAt when it becomes evergreen", async () => {
    app = await testApp();
    const id = await noteIn("published");
    await expect(app.notes.update(id, { content: "rewritten" })).rejects.toThrow(
      expect.objectContaining({ reason: "NOT_EDITABLE" }),
    );
    expect((await app.notes.update(id, { tags: ["Kept"] })).tags).toEqual(["kept"]);
    const evergreen = await app.notes.update(id, { status: "evergreen" });
    expect(evergreen.scheduledAt).toBeNull();
    expect((await app.notes.get(id)).publishedAt).toBe("2026-03-02T09:00:00.000Z");
  });
});

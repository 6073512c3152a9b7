import { afterEach, describe, expect, it } from "vitest";
import type { Embedder } from "../src/embed/types.js";
import { connect, items, type TestApp, testApp, userId } from "./helpers.js";

/**
 * A semantic window is the caller's visible notes in the documented order (similarity at 1e-6, then
 * note id), whatever notes it cannot see score above them: how many hidden notes outrank a visible
 * one must change no byte of the answer.
 */

/** Texts mapped to chosen unit vectors, so similarities can be set to the digit. */
class TableEmbedder implements Embedder {
  readonly id = "table-4";
  readonly dims = 4;
  constructor(private readonly table: Record<string, number>) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const c = this.table[t] ?? 0;
      return Float32Array.from([c, Math.sqrt(1 - c * c), 0, 0]);
    });
  }
}

// The query is (1, 0, 0, 0), so a note's cosine is its first component.
const embedder = new TableEmbedder({ query: 1, probe: 1, older: 0.5, newer: 0.5000003, hidden: 0.9 });

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function world(hidden: number): Promise<string[]> {
  app = await testApp({ embedder });
  const bob = await connect(app, "bob");
  const eve = await connect(app, "eve");
  await userId(app, "bob");
  const older = (await bob.ok("create_note", { text: "older" }))["id"] as string;
  const newer = (await bob.ok("create_note", { text: "newer" }))["id"] as string;
  for (let i = 0; i < hidden; i++) await eve.ok("create_note", { text: "hidden" });
  const window = items(await bob.ok("semantic_search", { query: "query", size: 1 })).map((i) => i.id);
  const both = items(await bob.ok("semantic_search", { query: "query", size: 2 })).map((i) => i.id);
  // find_similar ranks by the same index: a note of bob's whose vector is the query's.
  const probe = (await bob.ok("create_note", { text: "probe" }))["id"] as string;
  const similar = items(await bob.ok("find_similar", { note_id: probe, size: 1 })).map((i) => i.id);
  await bob.close();
  await eve.close();
  expect(both).toEqual([older, newer]);
  return [...window, ...similar, older];
}

describe("a window by meaning", () => {
  it("semantic_search and find_similar keep the documented order at a tie however many hidden notes score above it", async () => {
    for (const hidden of [0, 10, 63, 70, 300]) {
      const [window, similar, older] = await world(hidden);
      expect(window, `semantic_search, ${hidden} hidden notes`).toBe(older);
      expect(similar, `find_similar, ${hidden} hidden notes`).toBe(older);
      await app!.close();
      app = undefined;
    }
  });
});

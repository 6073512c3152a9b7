/** Notes waiting for embeddings are claimed by one instance each: two backfilling at once embed each note once. */
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { openAppAt } from "../src/app.js";
import { HashEmbedder } from "../src/embed/hash.js";
import { freshDatabase } from "./postgres-helpers.js";

/** The hash embedder, slowed a little and counting what it embeds. */
class CountingEmbedder extends HashEmbedder {
  embedded: string[] = [];
  override async embed(texts: readonly string[]): Promise<Float32Array[]> {
    await sleep(5);
    this.embedded.push(...texts);
    return super.embed(texts);
  }
}

it("embeds each waiting note once when two instances backfill together", async () => {
  const url = await freshDatabase();
  const one = new CountingEmbedder();
  const two = new CountingEmbedder();
  const a = await openAppAt(url, { embedder: one, log: () => {} });
  const b = await openAppAt(url, { embedder: two, log: () => {} });
  try {
    const ann = { userId: (await a.accounts.ensureUser("ann")).id, scopes: [] };
    // Written without vectors (as an import with --no-embed leaves them).
    for (let i = 0; i < 30; i++) {
      await a.store.notes.insert({
        uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        userId: ann.userId,
        folderId: null,
        title: `n${i}`,
        body: `body ${i}`,
        source: "note",
        sourceUrl: null,
        contentKey: null,
        createdMs: i,
        updatedMs: i,
        tags: [],
      });
    }
    expect(await a.store.vectors.countMissing(one.id)).toBe(30);
    const [ra, rb] = await Promise.all([a.notes.backfill({ batch: 4 }), b.notes.backfill({ batch: 4 })]);
    expect(ra.embedded + rb.embedded).toBe(30);
    expect(one.embedded.length + two.embedded.length).toBe(30);
    expect(new Set([...one.embedded, ...two.embedded]).size).toBe(30);
    expect(await a.store.vectors.countMissing(one.id)).toBe(0);
  } finally {
    await a.close();
    await b.close();
  }
});

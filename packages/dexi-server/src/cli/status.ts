import { describeStore } from "../app.js";
import { vectorsInUse } from "../store/index.js";
import { command } from "./context.js";

/**
 * `dexi status`: which store and which vector search this database gets, and how far its vectors are
 * (the current model's count and the notes still waiting for one). Reads only.
 */
export const status = command({
  options: {},
  async run(ctx) {
    const { store, embedder } = ctx.app.notes;
    const models = await store.vectors.models();
    const current = models.find((m) => m.model === embedder.id)?.count ?? 0;
    const waiting = await store.vectors.countMissing(embedder.id);
    ctx.out(
      [
        `store: ${ctx.db === undefined ? store.kind : describeStore(ctx.db)}`,
        `vectors: ${vectorsInUse(store)}`,
        `embeddings: ${embedder.id}, ${current} notes embedded, ${waiting} waiting`,
        "",
      ].join("\n"),
    );
    return 0;
  },
});

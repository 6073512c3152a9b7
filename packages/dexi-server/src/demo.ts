import { randomUUID } from "node:crypto";
import type { App } from "./app.js";
import { parseTags } from "./domain/tags.js";

/** Sample notes for `dexi-mcp --demo`: enough to try every tool at once. */
export const DEMO_NOTES: {
  title: string;
  text: string;
  folder?: string;
  source?: "bookmark";
  url?: string;
}[] = [
  {
    title: "Attention is all you need",
    text: "Reading notes on the transformer paper — the key insight is that self-attention replaces recurrence, so training parallelises across the sequence. #ml #papers @vaswani",
    source: "bookmark",
    url: "https://arxiv.org/abs/1706.03762",
    folder: "Reading",
  },
  {
    title: "How neural networks learn",
    text: "Backpropagation computes the gradient of the loss for every weight; gradient descent nudges the weights downhill. Deep networks stack many such layers. #ml #review",
    folder: "Reading",
  },
  {
    title: "Weeknight pasta",
    text: "Boil salted water, cook spaghetti 9 minutes. Meanwhile fry garlic in olive oil with chilli flakes, toss with the pasta and parsley. #recipes",
    folder: "Kitchen",
  },
  {
    title: "Sourdough starter schedule",
    text: "Feed the starter 1:1:1 flour/water every 12 hours; it is ready when it doubles in 4-6 hours. #recipes #baking",
    folder: "Kitchen",
  },
  {
    title: "Quarterly planning with @maria",
    text: "Agreed: ship the importer in May, hire a second designer, revisit pricing after the beta. Follow up with @maria on the budget. #work #planning",
    folder: "Work",
  },
  {
    title: "Spanish: ser vs estar",
    text: "ser = permanent traits (soy alto), estar = states and locations (estoy cansado, estoy en casa). #spanish #review",
  },
  {
    title: "Marathon training, week 6",
    text: "Long run 24 km at easy pace, two interval sessions. Knee felt fine. Next week taper slightly. #running #health",
  },
  {
    title: "Book list",
    text: "To read: Thinking, Fast and Slow; The Pragmatic Programmer; Gödel, Escher, Bach. #books",
  },
  {
    title: "SM-2 in one paragraph",
    text: "Each successful recall multiplies the review interval by an ease factor (start 2.5); a failed recall starts the card again. #review #learning",
  },
  {
    title: "Ideas for the garden",
    text: "Raised beds on the south side, tomatoes and basil together, a rain barrel by the shed. #garden",
  },
];

/** Seeds the demo user's notes once; the vectors are filled in afterwards (see backfill). */
export async function seedDemo(app: App, userId: number): Promise<number> {
  if ((await app.store.notes.countOwn(userId)) > 0) return 0;
  const now = Date.now();
  await app.store.tx(async () => {
    for (const [i, n] of DEMO_NOTES.entries()) {
      const folderId = n.folder ? (await app.store.accounts.ensureFolder(userId, n.folder)).id : null;
      const created = now - (DEMO_NOTES.length - i) * 3_600_000 * 7;
      const id = await app.store.notes.insert({
        uuid: randomUUID(),
        userId,
        folderId,
        title: n.title,
        body: n.text,
        source: n.source ?? "note",
        sourceUrl: n.url ?? null,
        contentKey: `demo:${i}`,
        createdMs: created,
        updatedMs: created,
        tags: parseTags(n.text),
      });
      if (n.source === "bookmark" && n.url) await app.store.records.addBookmark(id, n.url, created);
      await app.notes.syncCard(userId, id, n.text, created);
    }
  });
  return DEMO_NOTES.length;
}

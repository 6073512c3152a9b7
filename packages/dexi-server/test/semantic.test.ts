import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp as App } from "./helpers.js";
import { UseEmbedder } from "../src/embed/use.js";
import { connect, items, memoryApp, type Session } from "./helpers.js";

/** Labelled notes and paraphrased queries that share (almost) no words with them: the real USE model must rank each first. */
const NOTES: Record<string, [string, string]> = {
  nn: [
    "How neural networks learn",
    "Backpropagation computes gradients for every weight and gradient descent updates them layer by layer.",
  ],
  pasta: [
    "Weeknight pasta",
    "Boil spaghetti in salted water, fry garlic and chilli in olive oil, toss together with parsley.",
  ],
  marathon: [
    "Marathon training, week 6",
    "Long run of 24 km at an easy pace, two interval sessions, the knee felt fine.",
  ],
  taxes: [
    "Tax return checklist",
    "Collect payslips, receipts for deductions, and the pension statement before the filing deadline.",
  ],
  garden: [
    "Vegetable beds",
    "Plant tomatoes with basil in the raised beds on the south side; water early in the morning.",
  ],
  spanish: ["Spanish verbs", "Ser is for permanent traits, estar for temporary states and locations."],
  flight: [
    "Trip to Lisbon",
    "Flight TP 1351 leaves at 7:05, the hotel is in Alfama, booking reference QX7B2.",
  ],
  cat: ["Vet visit", "The cat had her vaccinations; next check-up in a year, keep an eye on her weight."],
  piano: [
    "Piano practice",
    "Scales for ten minutes, then the Chopin nocturne slowly with a metronome at 60.",
  ],
  budget: [
    "Household budget",
    "Rent, groceries and utilities take 60% of income; move 15% to savings each month.",
  ],
};

const QUERIES: [string, keyof typeof NOTES][] = [
  ["machine learning", "nn"],
  ["deep learning models", "nn"],
  ["dinner recipe with noodles", "pasta"],
  ["running a race", "marathon"],
  ["paying the government at year end", "taxes"],
  ["growing vegetables at home", "garden"],
  ["learning a foreign language grammar", "spanish"],
  ["holiday travel plans to Portugal", "flight"],
  ["my pet's health", "cat"],
  ["playing a musical instrument", "piano"],
  ["saving money and personal finance", "budget"],
];

let app: App;
let s: Session;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = memoryApp({ embedder: new UseEmbedder() });
  s = await connect(app, "ann");
  for (const [key, [title, text]] of Object.entries(NOTES))
    ids[key] = (await s.ok("create_note", { title, text }))["id"] as string;
}, 60_000);
afterAll(async () => {
  await s.close();
  await app.close();
});

describe("semantic quality with the offline USE model", () => {
  it.each(QUERIES)("%s → the %s note first", async (query, expected) => {
    const r = items(await s.ok("semantic_search", { query, size: 3 }));
    expect(r[0]!.id).toBe(ids[expected]);
    expect(r[0]!.similarity!).toBeGreaterThan(r[1]!.similarity!);
  });

  it("machine learning finds the neural-network note far above the pasta recipe", async () => {
    const r = items(await s.ok("semantic_search", { query: "machine learning", size: 10 }));
    const nn = r.find((i) => i.id === ids["nn"])!;
    const pasta = r.find((i) => i.id === ids["pasta"])!;
    expect(nn.similarity!).toBeGreaterThan(0.7);
    expect(pasta.similarity!).toBeLessThan(0.65);
  });

  it("find_similar ranks a paraphrase of a note above unrelated notes", async () => {
    const twin = await s.ok("create_note", {
      title: "Training deep nets",
      text: "Each layer's weights are adjusted by gradients that flow backwards from the loss.",
    });
    const r = items(await s.ok("find_similar", { note_id: twin["id"], size: 3 }));
    expect(r[0]!.id).toBe(ids["nn"]);
    expect(r.map((i) => i.id)).not.toContain(twin["id"]);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApp } from "../src/app.js";
import { resolveEmbedderConfig } from "../src/embed/config.js";
import { HashEmbedder, hashVector } from "../src/embed/hash.js";
import { OpenAiEmbedder } from "../src/embed/openai.js";
import { WorkerPoolEmbedder } from "../src/embed/pool.js";
import { VectorIndex } from "../src/embed/vector-index.js";
import { SqliteStore } from "../src/store/index.js";
import { connect, items, memoryApp } from "./helpers.js";

/** A local OpenAI-compatible /v1/embeddings server: vectors from the hash embedder, unnormalised (x3). */
let server: Server;
let base: string;
let requests: { auth: string | undefined; model: string; input: string[] }[] = [];
let failNext = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.url !== "/v1/embeddings" || req.method !== "POST") return void res.writeHead(404).end("no");
      if (failNext) {
        failNext = false;
        return void res.writeHead(503).end("model loading");
      }
      const json = JSON.parse(body) as { model: string; input: string[] };
      requests.push({ auth: req.headers.authorization, model: json.model, input: json.input });
      // Answer out of order, as the API allows: the index field says which is which.
      const data = json.input.map((t, index) => ({
        index,
        object: "embedding",
        embedding: [...hashVector(t, 64)].map((x) => x * 3),
      }));
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ object: "list", data: data.reverse(), model: json.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("OpenAI-compatible provider", () => {
  it("posts model and input with the key, restores order, normalises, learns dims", async () => {
    requests = [];
    const e = new OpenAiEmbedder({
      baseUrl: `${base}/`,
      model: "nomic-embed-text",
      apiKey: "sk-test",
      batch: 2,
    });
    expect(e.id).toBe("openai:nomic-embed-text");
    const v = await e.embed(["alpha", "beta", "gamma"]);
    expect(requests).toHaveLength(2);
    expect(requests[0]).toEqual({
      auth: "Bearer sk-test",
      model: "nomic-embed-text",
      input: ["alpha", "beta"],
    });
    expect(e.dims).toBe(64);
    expect([...v[1]!]).toEqual([...hashVector("beta", 64)].map((x) => expect.closeTo(x, 5)));
    const norm = Math.hypot(...v[2]!);
    expect(norm).toBeCloseTo(1, 5);
  });

  it("is chosen by configuration and serves create_note / semantic_search end to end", async () => {
    const cfg = resolveEmbedderConfig(() => undefined, {
      DEXI_EMBEDDINGS: "openai",
      DEXI_EMBEDDINGS_URL: base,
      DEXI_EMBEDDINGS_MODEL: "m1",
    });
    expect(cfg).toEqual({ provider: "openai", url: base, model: "m1" });
    const saved = resolveEmbedderConfig((k) => ({ "embeddings.provider": "hash" })[k], {});
    expect(saved.provider).toBe("hash");
    expect(() => resolveEmbedderConfig(() => undefined, { DEXI_EMBEDDINGS: "bert" })).toThrow(
      /Unknown embeddings provider "bert"/,
    );

    const app = memoryApp({ embedder: new OpenAiEmbedder({ baseUrl: base, model: "m1" }) });
    const s = await connect(app, "ann");
    const n = await s.ok("create_note", { title: "kiwi", text: "fruit salad" });
    expect(items(await s.ok("semantic_search", { query: "kiwi fruit salad", size: 1 }))[0]!.id).toBe(n["id"]);
    // A failing endpoint: the note is still created (without a vector), semantic search says why.
    failNext = true;
    const m = await s.ok("create_note", { title: "mango" });
    expect(app.store.sync.vectors.countMissing("openai:m1")).toBe(1);
    failNext = true;
    const e = await s.fails("semantic_search", { query: "mango" });
    expect(e.reason).toBe("EMBEDDINGS_UNAVAILABLE");
    expect(e.message).toContain("503");
    // backfill (what `dexi reindex` runs) fills the gap.
    expect(await app.notes.backfill()).toEqual({ embedded: 1 });
    expect(items(await s.ok("semantic_search", { query: "mango", size: 1 }))[0]!.id).toBe(m["id"]);
    await s.close();
    await app.close();
  });
});

describe("model changes and the vector cache", () => {
  it("re-embeds every note when the model changes, keyed by model id", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dexi-emb-"));
    const path = `${dir}/x.db`;
    const a = openApp(path, { embedder: new HashEmbedder(), log: () => {} });
    const s = await connect(a, "ann");
    for (const t of ["one", "two", "three"]) await s.ok("create_note", { text: t });
    await s.close();
    await a.close();
    const b = openApp(path, { embedder: new OpenAiEmbedder({ baseUrl: base, model: "m2" }), log: () => {} });
    expect(b.store.sync.vectors.countMissing("openai:m2")).toBe(3);
    expect(await b.notes.backfill({ batch: 2 })).toEqual({ embedded: 3 });
    expect(b.store.sync.vectors.models()).toEqual([{ model: "openai:m2", count: 3 }]);
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reloads when another connection changes vectors, and follows its own writes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dexi-idx-"));
    const one = SqliteStore.open(`${dir}/v.db`);
    const two = SqliteStore.open(`${dir}/v.db`);
    const u = one.sync.accounts.ensureUser("ann", 0).id;
    const ids = [1, 2, 3].map((i) =>
      one.sync.notes.insert({
        uuid: `00000000-0000-4000-8000-00000000000${i}`,
        userId: u,
        folderId: null,
        title: `${i}`,
        body: "",
        source: "note",
        sourceUrl: null,
        contentKey: null,
        createdMs: 0,
        updatedMs: 0,
        tags: [],
      }),
    );
    let loads = 0;
    const idx = new VectorIndex(
      {
        version: () => one.vectors.version(),
        each: (model, visit) => {
          loads++;
          return one.vectors.each(model, visit);
        },
      },
      "hash-512",
    );
    const put = (s: SqliteStore, id: number, text: string) =>
      s.sync.vectors.put(id, "hash-512", hashVector(text, 512));
    put(one, ids[0]!, "apple");
    expect((await idx.fresh()).size).toBe(1);
    put(two, ids[1]!, "banana");
    expect((await idx.fresh()).size).toBe(2);
    const accept = async (ids2: number[]) => new Set(ids2);
    expect((await idx.search(hashVector("banana", 512), 1, accept))[0]!.id).toBe(ids[1]);
    two.sync.notes.delete(ids[1]!);
    expect((await idx.search(hashVector("banana", 512), 5, accept)).map((h) => h.id)).toEqual([ids[0]]);
    // Own writes (DB first, then the index) apply in place: no reload of every vector.
    loads = 0;
    one.sync.vectors.put(ids[2]!, "hash-512", hashVector("cherry", 512));
    await idx.put(ids[2]!, hashVector("cherry", 512));
    expect((await idx.search(hashVector("cherry", 512), 1, accept))[0]!.id).toBe(ids[2]);
    one.sync.notes.delete(ids[2]!);
    await idx.remove(ids[2]!);
    expect(idx.vector(ids[2]!)).toBeUndefined();
    expect(loads).toBe(0);
    // A write by another connection in between forces one reload.
    put(two, ids[0]!, "apricot");
    expect((await idx.search(hashVector("apricot", 512), 1, accept))[0]!.id).toBe(ids[0]);
    expect(loads).toBe(1);
    await one.close();
    await two.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("worker-thread embedding", () => {
  it("gives the same vectors as in-process embedding, spread over workers", async () => {
    const pool = new WorkerPoolEmbedder({ provider: "hash" }, 2, 3);
    const texts = Array.from({ length: 10 }, (_, i) => `note number ${i} about topic ${i % 3}`);
    const got = await pool.embed(texts);
    const want = await new HashEmbedder().embed(texts);
    expect(got.map((v) => [...v])).toEqual(want.map((v) => [...v]));
    expect(pool.id).toBe("hash-512");
    await pool.close();
  });
});

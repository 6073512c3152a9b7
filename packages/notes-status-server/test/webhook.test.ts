import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UNPUBLISHED } from "../src/domain/notes.js";
import { PublishError } from "../src/domain/publishers/types.js";
import { WebhookPublisher } from "../src/domain/publishers/webhook.js";
import { createNotesApp } from "../src/app.js";
import { manualClock } from "@mcpforge/toolkit/testing";
import { freshStore } from "./helpers.js";

const SECRET = "s3cret-key";

interface Received {
  body: string;
  headers: IncomingMessage["headers"];
  signatureOk: boolean;
}

/** A receiver that checks the signature the way a real one would, answering from a script of statuses. */
let server: Server;
let url: string;
let received: Received[];
let script: number[];

beforeEach(async () => {
  received = [];
  script = [];
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const expected = Buffer.from(`sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`);
      const given = Buffer.from(String(req.headers["x-signature-256"] ?? ""));
      const signatureOk = given.length === expected.length && timingSafeEqual(given, expected);
      received.push({ body, headers: req.headers, signatureOk });
      res.statusCode = signatureOk ? (script.shift() ?? 200) : 401;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function publisher(overrides: Partial<ConstructorParameters<typeof WebhookPublisher>[0]> = {}) {
  const sleeps: number[] = [];
  const p = new WebhookPublisher({
    url,
    secret: SECRET,
    maxAttempts: 4,
    baseDelayMs: 100,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
  return { p, sleeps };
}

describe("webhook publisher", () => {
  it("posts a signed JSON body the receiver can verify", async () => {
    const time = manualClock("2026-03-02T08:00:00Z");
    const { p } = publisher();
    const app = await createNotesApp({ db: await freshStore(), clock: time.date, publisher: p });
    const id = (await app.notes.create({ content: "signed 🔏", tags: ["sig"], status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    time.set("2026-03-02T09:00:00Z");
    expect((await app.scheduler.publishDue()).published).toEqual([id]);
    expect(received).toHaveLength(1);
    const [hit] = received;
    expect(hit!.signatureOk).toBe(true);
    expect(hit!.headers["content-type"]).toBe("application/json");
    expect(hit!.headers["x-notes-event"]).toBe("note.published");
    expect(hit!.headers["x-notes-delivery"]).toBe(`${id}:post`);
    expect(JSON.parse(hit!.body)).toMatchObject({
      event: "note.published",
      note: { id, content: "signed 🔏", tags: ["sig"], publishedAt: "2026-03-02T09:00:00.000Z" },
    });
    await app.close();
  });

  it("a wrong secret is caught by the receiver's check", async () => {
    const { p } = publisher({ secret: "not-the-secret", maxAttempts: 1 });
    await expect(p.publish({ kind: "post", at: "2026-03-02T09:00:00Z", note: sampleNote() })).rejects.toThrow(
      /HTTP 401/,
    );
    expect(received[0]!.signatureOk).toBe(false);
  });

  it("retries 5xx, 429 and 408 with exponential backoff until one succeeds", async () => {
    script = [503, 429, 408];
    const { p, sleeps } = publisher();
    await p.publish({ kind: "post", at: "2026-03-02T09:00:00Z", note: sampleNote() });
    expect(received).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
  });

  it("does not retry an answer that will not change (400)", async () => {
    script = [400];
    const { p, sleeps } = publisher();
    const err = await p.publish({ kind: "post", at: "x", note: sampleNote() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishError);
    expect((err as PublishError).attempts).toBe(1);
    expect((err as PublishError).message).toMatch(/HTTP 400.*not retried/);
    expect(sleeps).toEqual([]);
  });

  it("retries a refused connection and gives up after maxAttempts", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dead = new WebhookPublisher({
      url: `http://127.0.0.1:${port}/hook`,
      secret: SECRET,
      maxAttempts: 3,
      baseDelayMs: 1,
    });
    const err = await dead.publish({ kind: "post", at: "x", note: sampleNote() }).catch((e: unknown) => e);
    expect((err as PublishError).attempts).toBe(3);
    expect((err as PublishError).message).toMatch(/ECONNREFUSED.*after 3 attempts/);
  });

  it("a final failure leaves the note scheduled with lastError and attempts", async () => {
    script = [500, 502, 503, 504, 500, 500, 500, 500];
    const time = manualClock("2026-03-02T08:00:00Z");
    const { p } = publisher();
    const app = await createNotesApp({ db: await freshStore(), clock: time.date, publisher: p });
    const id = (await app.notes.create({ content: "doomed", status: "ready" })).id;
    await app.notes.schedule([{ id, scheduledAt: "2026-03-02T09:00:00Z" }]);
    time.set("2026-03-02T09:00:00Z");
    const report = await app.scheduler.publishDue();
    expect(report.failed).toHaveLength(1);
    expect(received).toHaveLength(4);
    expect(await app.notes.get(id)).toMatchObject({ status: "scheduled", attempts: 4 });
    expect((await app.notes.get(id)).lastError).toMatch(/HTTP 504.*after 4 attempts/);
    // Runs within the back-off (8 minutes after 4 attempts) leave it alone; the first after tries again,
    // and this time the receiver accepts on the last try.
    script = [500, 500, 500];
    time.advance(60_000);
    expect(await app.scheduler.publishDue()).toMatchObject({ published: [], failed: [] });
    expect(received).toHaveLength(4);
    time.set("2026-03-02T09:08:00Z");
    expect((await app.scheduler.publishDue()).published).toEqual([id]);
    expect(await app.notes.get(id)).toMatchObject({ status: "published", attempts: 8, lastError: null });
    await app.close();
  });

  it("refuses a config without a secret or with a non-http URL", async () => {
    expect(() => new WebhookPublisher({ url, secret: "" })).toThrow(/secret/);
    expect(() => new WebhookPublisher({ url: "ftp://x", secret: SECRET })).toThrow(/http/);
  });
});

function sampleNote() {
  return {
    id: "n1",
    content: "c",
    tags: [],
    status: "scheduled" as const,
    scheduledAt: "2026-03-02T09:00:00.000Z",
    autoRestackAfterHours: null,
    createdAt: "2026-03-01T00:00:00.000Z",
    updatedAt: "2026-03-01T00:00:00.000Z",
    ...UNPUBLISHED,
  };
}

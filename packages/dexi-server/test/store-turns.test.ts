import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SqliteStore } from "../src/store/index.js";

let store: SqliteStore;
beforeEach(() => {
  store = SqliteStore.open(":memory:");
});
afterEach(async () => {
  await store.close();
});

const read = () => store.accounts.config("k");

it("runs transactions that span awaits one after the other: no lost update", async () => {
  const append = (s: string) =>
    store.tx(async () => {
      const before = (await read()) ?? "";
      await sleep(5);
      await store.accounts.setConfig("k", before + s);
    });
  await Promise.all([append("a"), append("b"), append("c")]);
  expect(await read()).toBe("abc");
});

it("makes a call from outside wait for the open transaction, and see only what it committed", async () => {
  const order: string[] = [];
  const tx = store.tx(async () => {
    await store.accounts.setConfig("k", "inside");
    await sleep(5);
    order.push("commit");
  });
  const outside = read().then((v) => {
    order.push(`read ${v}`);
  });
  await Promise.all([tx, outside]);
  expect(order).toEqual(["commit", "read inside"]);
});

it("rolls back every write of a transaction that fails, nested ones included", async () => {
  await store.accounts.setConfig("k", "kept");
  const failing = store.tx(async () => {
    await store.accounts.setConfig("k", "lost");
    await store.tx(async () => {
      await store.accounts.setConfig("other", "lost too");
    });
    await sleep(1);
    throw new Error("refused");
  });
  await expect(failing).rejects.toThrow("refused");
  expect(await read()).toBe("kept");
  expect(await store.accounts.config("other")).toBeUndefined();
  // The queue goes on after a failure.
  await store.tx(() => store.accounts.setConfig("k", "after"));
  expect(await read()).toBe("after");
});

it("reports a failed call as failed, and runs the next one", async () => {
  const bad = store.notes.insert({
    uuid: "00000000-0000-4000-8000-000000000001",
    userId: 999,
    folderId: null,
    title: "t",
    body: "",
    source: "note",
    sourceUrl: null,
    contentKey: null,
    createdMs: 0,
    updatedMs: 0,
    tags: [],
  });
  await expect(bad).rejects.toThrow(/FOREIGN KEY/);
  expect(await store.notes.countOwn(999)).toBe(0);
});

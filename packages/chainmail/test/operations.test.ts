/**
 * The operation table: params are checked by each declaration's schema, with the daemon's wording
 * (INVALID_ARGUMENT naming the parameter), defaults filled in, and every method has a handler.
 */
import { describe, expect, it } from "vitest";
import { HANDLERS } from "../src/daemon/methods.js";
import { METHODS, OPERATIONS, parseParams } from "../src/daemon/operations/index.js";
import { MAX_LABEL_LENGTH } from "../src/limits.js";

const refused = (method: keyof typeof OPERATIONS, params: unknown) => {
  try {
    parseParams(OPERATIONS[method].params, params);
  } catch (err) {
    expect(err).toMatchObject({ name: "MailError", reason: "INVALID_ARGUMENT" });
    return (err as Error).message;
  }
  throw new Error(`${method} accepted ${JSON.stringify(params)}`);
};

describe("operation params", () => {
  it("words each problem as the daemon always has", () => {
    expect(refused("account.test", {})).toBe("account is required");
    expect(refused("account.test", { account: "" })).toBe("account is required");
    expect(refused("account.test", { account: null })).toBe("account is required");
    expect(refused("account.test", { account: 7 })).toBe("account must be a string");
    expect(refused("account.test", { account: "a".repeat(65) })).toBe(
      "account must be at most 64 characters",
    );
    expect(refused("search", "text")).toBe("params must be an object");
    expect(refused("search", [1])).toBe("params must be an object");
    expect(refused("search", { limit: 0 })).toBe("limit must be from 1 to 200");
    expect(refused("search", { limit: 2 ** 53 })).toBe("limit must be from 1 to 200");
    expect(refused("search", { limit: 1.5 })).toBe("limit must be an integer");
    expect(refused("search", { limit: "5" })).toBe("limit must be an integer");
    expect(refused("search", { source: "disk" })).toBe('source must be "auto", "cache" or "server"');
    expect(refused("search", { threads: "yes" })).toBe("threads must be true or false");
    expect(refused("search", { accounts: "work" })).toBe("accounts must be an array of strings");
    expect(refused("move", { folder: "A" })).toBe("refs is required");
    expect(refused("move", { refs: [], folder: "A" })).toBe("refs must hold 1 to 500 items");
    expect(refused("move", { refs: Array(501).fill("m1.x"), folder: "A" })).toBe(
      "refs must hold 1 to 500 items",
    );
    expect(refused("move", { refs: ["m1.x", 3], folder: "A" })).toBe("refs[1] must be a string");
    expect(refused("move", { refs: ["m1.x", ""], folder: "A" })).toBe("refs[1] must not be empty");
    expect(refused("labels", { refs: ["m1.x"], add: ["l".repeat(MAX_LABEL_LENGTH + 1)] })).toBe(
      "add[0] is too long",
    );
    expect(refused("audit.read", { since: "yesterday" })).toBe("since must be an RFC 3339 time");
    // One key rule for create_item and the sending calls, named the same way by both.
    const send = { account: "work", to: ["a@example.com"], subject: "s" };
    const rule = "idempotency_key must be 1 to 128 of A-Z a-z 0-9 . _ : -";
    expect(refused("send", { ...send, idempotency_key: "has space" })).toBe(rule);
    expect(refused("item.create", { type: "task", title: "t", area: "work", idempotency_key: "ä" })).toBe(
      rule,
    );
    expect(refused("send", { ...send, idempotency_key: "k".repeat(129) })).toBe(
      "idempotency_key must be at most 128 characters",
    );
  });

  it("fills in defaults, reads null and empty strings as absent, and drops unknown keys", () => {
    expect(parseParams(OPERATIONS.search.params, { cursor: "", source: "", junk: 1, query: null })).toEqual({
      query: "",
      accounts: [],
      limit: 25,
      count_only: false,
      snippets: false,
      threads: false,
      source: "auto",
    });
    expect(parseParams(OPERATIONS["audit.read"].params, undefined)).toEqual({ limit: 1000 });
    expect(parseParams(OPERATIONS.flags.params, { refs: ["m1.x"], add: ["seen"] })).toEqual({
      refs: ["m1.x"],
      add: ["seen"],
      remove: [],
    });
  });

  it("has one handler per declared method, in the protocol's method list", () => {
    expect(Object.keys(HANDLERS).sort()).toEqual([...METHODS].sort());
    expect(METHODS).toContain("cache.sync");
    expect(OPERATIONS.move.mutates).toBe(true);
    expect(OPERATIONS.search.mutates).toBe(false);
  });
});

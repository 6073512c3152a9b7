import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type AskTarget, checkElicitation, ELICITATION_MATRIX } from "../src/testing/elicitation.js";
import { checkCombination, MATRIX, type MatrixTarget } from "../src/testing/matrix.js";
import { packageVersion } from "../src/version.js";

const cli = fileURLToPath(new URL("../dist/example/bin/mcpforge-example.js", import.meta.url));
const version = packageVersion(import.meta.url);

function target(gateFile: string): MatrixTarget {
  writeFileSync(gateFile, JSON.stringify({ allowPurge: false }));
  return {
    spawn: { command: process.execPath, args: [cli, "--gate-file", gateFile, "--gate-max-age-ms", "0"] },
    serverInfo: { name: "mcpforge-example", version },
    listed: ["add_note", "list_notes", "get_note"],
    ok: {
      tool: "add_note",
      args: { text: "from the matrix" },
      check: (s) => expect((s["note"] as { id: number }).id).toBe(1),
    },
    error: { tool: "get_note", args: { id: 99 }, reason: "NOT_FOUND" },
    gate: {
      tool: "purge",
      open: () => writeFileSync(gateFile, JSON.stringify({ allowPurge: true })),
      close: () => writeFileSync(gateFile, JSON.stringify({ allowPurge: false })),
    },
  };
}

describe("the example bin in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, (dir) => target(join(dir, "gate.json")));
    },
    60_000,
  );
});

/**
 * A server whose output schemas carry repeated shapes once in their $defs (test/fixtures): each
 * client validates a batch result that goes through every shape, and an error whose detail is the
 * shared untrusted wrapper (compact-clients.test.ts checks that these results reach every definition).
 */
const shapes: MatrixTarget = {
  spawn: {
    command: process.execPath,
    // Listed, so the v1 client checks both results against the compact schemas.
    args: [fileURLToPath(new URL("./fixtures/shapes-server.mjs", import.meta.url)), "--output-schemas"],
  },
  serverInfo: { name: "shapes", version: "0.0.0" },
  listed: ["file_letters", "read_letter"],
  ok: {
    tool: "file_letters",
    args: { refs: ["a", "b"] },
    check: (s) => expect(s).toMatchObject({ succeeded: 1, failed: 1 }),
  },
  error: { tool: "read_letter", args: { ref: "gone" }, reason: "MAILBOX_REFUSED" },
};

describe("compact output schemas in every client and transport", () => {
  it.each(MATRIX)(
    "$client over $transport",
    async (combination) => {
      await checkCombination(combination, shapes);
    },
    60_000,
  );
});

/** The example's forward_message (Send / Keep as draft) and connect_mailbag (a URL), its sends counted in the outbox file. */
function askTarget(dir: string): AskTarget {
  const outbox = join(dir, "outbox.jsonl");
  return {
    spawn: { command: process.execPath, args: [cli, "--outbox", outbox] },
    form: {
      tool: "forward_message",
      args: { id: 1, to: "bob@example.com" },
      accept: { decision: "send" },
      check: (answer, s) =>
        expect(s).toEqual(
          answer === "accept"
            ? { status: "sent", answer: "send" }
            : { status: "held", answer: answer === "cannot-ask" ? "unavailable" : answer },
        ),
    },
    url: {
      tool: "connect_mailbag",
      args: {},
      check: (answer, s) =>
        expect(s).toEqual({
          connected: answer === "accept",
          answer: answer === "cannot-ask" ? "unavailable" : answer,
        }),
    },
    count: () => (existsSync(outbox) ? readFileSync(outbox, "utf8").split("\n").filter(Boolean).length : 0),
  };
}

describe("the example bin asks the person in every era and transport", () => {
  it.each(ELICITATION_MATRIX)(
    "$client over $transport, the person answers $answer",
    async (combination) => {
      await checkElicitation(combination, askTarget);
    },
    60_000,
  );
});

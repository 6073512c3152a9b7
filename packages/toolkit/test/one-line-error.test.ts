/**
 * An outgoing -32602 carrying the SDK's multi-line issue dump is cut to one line with the paths it
 * names. The dump echoes what the client sent (keys, values), so reading it must take time in
 * proportion to it: the regular expressions this once used backtracked quadratically.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { oneLineError } from "../src/jsonrpc.js";

const refusal = (message: string) => ({ jsonrpc: "2.0" as const, id: 1, error: { code: -32602, message } });
const messageOf = (m: ReturnType<typeof oneLineError>) => ("error" in m ? m.error.message : "");

it("keeps the first line and names each path once", () => {
  const dump = JSON.stringify(
    [
      { code: "invalid_type", path: ["params", "task"] },
      { code: "too_big", path: ["arguments", "items", 3] },
      { code: "invalid_type", path: ["params", "task"] },
    ],
    null,
    2,
  );
  expect(messageOf(oneLineError(refusal(`Invalid params: [\n${dump}`)))).toBe(
    "Invalid params (at params.task, arguments.items.3)",
  );
  expect(messageOf(oneLineError(refusal("one line: kept as it is [")))).toBe("one line: kept as it is [");
});

it("gives each well-formed dump its paths, whatever the head", () => {
  const key = fc.oneof(fc.stringMatching(/^[a-z_]{1,8}$/), fc.nat(99));
  fc.assert(
    fc.property(
      fc.stringMatching(/^[^\n]*$/),
      fc.array(fc.array(key, { minLength: 1, maxLength: 4 }), { maxLength: 5 }),
      (head, paths) => {
        const dump = JSON.stringify(
          paths.map((path) => ({ message: "x", path })),
          null,
          2,
        );
        const out = messageOf(oneLineError(refusal(`${head}\n${dump}`)));
        const names = [...new Set(paths.map((p) => p.join(".")))];
        expect(out).toBe(
          `${head.replace(/[:\s[{]+$/, "")}${names.length ? ` (at ${names.join(", ")})` : ""}`,
        );
      },
    ),
  );
});

it("reads a hostile dump in time in proportion to it", () => {
  const started = Date.now();
  oneLineError(refusal(`x${" ".repeat(500_000)}!\n`));
  oneLineError(refusal(`x\n${'"path":['.repeat(200_000)}`));
  oneLineError(refusal(`${": ".repeat(300_000)}\nend`));
  // The old expressions took minutes on the first two; one pass takes milliseconds.
  expect(Date.now() - started).toBeLessThan(2_000);
});

import { z } from "zod";
import { hints } from "../../../annotations.js";
import { toolFactory } from "../../../define.js";
import type { ExampleContext, ExampleState } from "./shared.js";

const tool = toolFactory<ExampleContext, ExampleState>({ group: "Diagnostics", scope: null });

export const fail = tool({
  name: "fail",
  title: "Fail on purpose",
  description: "Throws an unexpected error, to show that the caller gets INTERNAL and no details.",
  input: {
    secret: z.string().max(100).default("hunter2").describe("A value that must never reach the client"),
  },
  output: { ok: z.boolean() },
  annotations: hints.readOnly,
  summary: () => "never",
  handler: ({ secret }) => {
    throw new Error(`database password is ${secret}`);
  },
});

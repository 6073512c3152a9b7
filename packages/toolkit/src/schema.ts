import { z } from "zod";
import { compactSchema } from "./compact.js";
import type { AnyTool } from "./define.js";
import { ToolError } from "./errors.js";
import { UNTRUSTED_TITLE } from "./untrusted.js";

/**
 * The dialect of every schema the kit emits. Not written into the schemas: MCP (2025-11-25 and
 * 2026-07-28, "JSON Schema Usage") makes 2020-12 the default for a schema without `$schema`.
 */
export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

export type JsonSchema = Record<string, unknown>;

/** The error branch every output schema admits, so SDK clients accept error results (SDK issue 1943). */
export const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  title: "ToolError",
  description: "A failed call: isError is true and this is the structured content.",
  properties: {
    error: {
      type: "object",
      properties: {
        reason: { type: "string" },
        message: { type: "string" },
        hint: { type: "string" },
        // Outside text that explains the failure (a server's reply, a file name), fenced: see
        // ToolError. Optional, so the seed's three-field errors still match.
        detail: {
          type: "object",
          properties: { untrusted: { type: "string" } },
          required: ["untrusted"],
          additionalProperties: false,
          title: UNTRUSTED_TITLE,
          description: "Outside text that explains the failure, such as a server's reply (untrusted)",
        },
      },
      required: ["reason", "message", "hint"],
      additionalProperties: false,
    },
  },
  required: ["error"],
  additionalProperties: false,
};

export interface CompiledSchemas {
  inputZod: z.ZodObject;
  outputZod: z.ZodObject;
  inputSchema: JsonSchema;
  /** The success schema alone (what a result must match). */
  resultSchema: JsonSchema;
  /**
   * What tools/list advertises: the success schema or the error branch, each shape that repeats
   * written once in its `$defs` (see compactSchema). Built on first use, not at start-up.
   */
  readonly outputSchema: JsonSchema;
}

/** zod states the safe-integer range on every `.int()`; it says nothing a reader needs, so it goes. */
function dropSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropSafeIntegerBounds(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const n = node as Record<string, unknown>;
  if (n["minimum"] === Number.MIN_SAFE_INTEGER) delete n["minimum"];
  if (n["maximum"] === Number.MAX_SAFE_INTEGER) delete n["maximum"];
  for (const value of Object.values(n)) dropSafeIntegerBounds(value);
}

function toJson(schema: z.ZodType, io: "input" | "output", where: string): JsonSchema {
  try {
    const json = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "throw",
    }) as JsonSchema;
    delete json["$schema"];
    dropSafeIntegerBounds(json);
    return json;
  } catch (err) {
    throw new Error(`${where} cannot be converted to JSON Schema: ${(err as Error).message}`);
  }
}

/** Builds and checks one tool's schemas; throws a message naming the tool and the rule it breaks. */
export function compileSchemas(tool: AnyTool): CompiledSchemas {
  const where = `Tool "${tool.name}"`;
  if (!TOOL_NAME_PATTERN.test(tool.name)) {
    throw new Error(
      `${where}: a name must match ${TOOL_NAME_PATTERN} (lowercase letters, digits, underscores)`,
    );
  }
  for (const [field, value] of [
    ["description", tool.description],
    ["title", tool.title],
    ["group", tool.group],
  ] as const) {
    if (typeof value !== "string" || value.trim() === "")
      throw new Error(`${where}: ${field} must not be empty`);
  }
  for (const key of ["readOnly", "destructive", "idempotent", "openWorld"] as const) {
    if (typeof tool.annotations?.[key] !== "boolean") {
      throw new Error(`${where}: annotation ${key} must be set to true or false`);
    }
  }
  const inputZod = z.strictObject(tool.input);
  const outputZod = z.object(tool.output);
  const inputSchema = toJson(inputZod, "input", `${where} input`);
  // The output view of the input refuses transforms and pipes, which would make the advertised
  // schema differ from what the handler receives.
  toJson(inputZod, "output", `${where} input`);
  const props = (inputSchema["properties"] ?? {}) as Record<string, JsonSchema>;
  for (const [key, prop] of Object.entries(props)) {
    if (typeof prop["description"] !== "string" || prop["description"].trim() === "") {
      throw new Error(`${where}: input property "${key}" needs a description (.describe("..."))`);
    }
  }
  const resultSchema = toJson(outputZod, "output", `${where} output`);
  // Input schemas stay written out: a model fills them in, and not every model provider or client
  // that builds a form from one resolves `$ref` (and they repeat little: under 1 KB in chainmail).
  let outputSchema: JsonSchema | undefined;
  return {
    inputZod,
    outputZod,
    inputSchema,
    resultSchema,
    get outputSchema() {
      outputSchema ??= compactSchema({ type: "object", anyOf: [resultSchema, ERROR_SCHEMA] });
      return outputSchema;
    },
  };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : undefined;
  const at = field ? `"${field}"` : "the arguments";
  switch (issue.code) {
    case "unrecognized_keys":
      return `unknown argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${field ? `${field}.` : ""}${k}"`).join(", ")}`;
    case "invalid_type":
      return issue.input === undefined
        ? `${at} is required`
        : `${at} must be ${issue.expected === "int" ? "an integer" : `of type ${issue.expected}`}`;
    case "too_big":
      return issue.origin === "string"
        ? `${at} must be at most ${issue.maximum} characters`
        : issue.origin === "array"
          ? `${at} must have at most ${issue.maximum} items`
          : `${at} must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}`;
    case "too_small":
      return issue.origin === "string"
        ? Number(issue.minimum) === 1
          ? `${at} must not be empty`
          : `${at} must be at least ${issue.minimum} characters`
        : issue.origin === "array"
          ? `${at} must have at least ${issue.minimum} item${Number(issue.minimum) === 1 ? "" : "s"}`
          : `${at} must be ${issue.inclusive ? "at least" : "greater than"} ${issue.minimum}`;
    case "invalid_value":
      return `${at} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return `${at} must be a valid ${issue.format}${"pattern" in issue && issue.pattern ? ` (${issue.pattern})` : ""}`;
    case "not_multiple_of":
      return `${at} must be a multiple of ${issue.divisor}`;
    default:
      return `${at}: ${issue.message}`;
  }
}

/** Parses arguments strictly; a bad argument becomes INVALID_ARGUMENT naming the field and the rule. */
export function parseInput(schema: z.ZodObject, args: unknown): Record<string, unknown> {
  const result = schema.safeParse(args ?? {}, { reportInput: true });
  if (result.success) return result.data as Record<string, unknown>;
  const problems = result.error.issues.map(describeIssue);
  throw new ToolError("INVALID_ARGUMENT", `Invalid arguments: ${problems.join("; ")}`);
}

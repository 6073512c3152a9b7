import { z } from "zod";
import { ToolError } from "../../../errors.js";
import type { ExampleNote, Notebook } from "../../domain/notebook.js";

export interface ExampleState {
  /** Whether destructive purging is allowed; gates `purge` and makes `archive_all` destructive. */
  allowPurge: boolean;
}

export interface ExampleContext {
  notebook: Notebook;
}

export const EXAMPLE_READ = "example:read";
export const EXAMPLE_WRITE = "example:write";

/** A note as every tool returns it; `satisfies` fails to compile when it drifts from the domain's type. */
export const NoteSchema = z.object({
  id: z.number().int(),
  text: z.string(),
  archived: z.boolean(),
}) satisfies z.ZodType<ExampleNote>;

export function notFound(what: "Note" | "Message", id: number): never {
  throw new ToolError("NOT_FOUND", `${what} not found: ${id}`);
}

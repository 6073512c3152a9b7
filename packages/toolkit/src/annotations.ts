import type { Annotations } from "./define.js";

/**
 * The annotation vocabulary: the four MCP hints in the combinations tools actually have, named by what
 * a call does. Every preset is closed-world (it touches only the server's own data); wrap it in
 * `openWorld()` for a tool that reaches outside (a mail server, the web). The kit still sends all four
 * hints of every tool explicitly in tools/list.
 */
export const hints = {
  /** Reads only; calling it again changes nothing. */
  readOnly: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  /** Adds something new on each call: a retry adds it again. */
  additive: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  /** Changes state without destroying any; the same call again leaves things as the first did. */
  idempotentWrite: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  /** Removes or overwrites data; the same call again does nothing more. */
  destructiveIdempotent: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  /** Removes or overwrites data, and each call does it again. */
  destructive: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
} as const satisfies Record<string, Annotations>;

/** The same hints for a tool whose effects reach beyond the server's own data. */
export function openWorld(preset: Annotations): Annotations {
  return { ...preset, openWorld: true };
}

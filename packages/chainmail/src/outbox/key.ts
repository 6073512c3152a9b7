/**
 * Derived idempotency keys. A send without a key gets `d1.` + the SHA-256 (hex) of a canonical JSON
 * array: the tool name, the input with absent, null, empty and false values dropped and object keys
 * sorted, and each file's content hash in order (attachments, then inline images). So an identical
 * call (same tool, same arguments, same file contents) replays, and a change anywhere sends.
 */
import { createHash } from "node:crypto";

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || x === null || x === "" || x === false) continue;
      if (Array.isArray(x) && x.length === 0) continue;
      if (k === "idempotency_key") continue;
      out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

export function deriveKey(tool: string, input: Record<string, unknown>, fileHashes: string[]): string {
  const text = JSON.stringify([tool, canonical(input), fileHashes]);
  return `d1.${createHash("sha256").update(text).digest("hex")}`;
}

/** The upload operations over the daemon's spool, each upload audited once as `upload`. */
import { resolve } from "node:path";
import { attachRefusal, attachRules } from "../compose/files.js";
import { MailError } from "../errors.js";
import type { UploadSpool } from "../uploads/spool.js";
import { type Call, type ServiceContext, audit } from "./context.js";

export function spoolOf(ctx: ServiceContext): UploadSpool {
  if (!ctx.uploads) throw new MailError("UNSUPPORTED", "this daemon takes no uploads");
  return ctx.uploads;
}

export function beginUpload(ctx: ServiceContext, call: Call, path: string, size: number) {
  try {
    // The client sends the real path of the file it opened: judged here against config.toml's roots.
    const why = attachRefusal(resolve(path), attachRules(ctx.home, ctx.config.files));
    if (why) throw new MailError("INVALID_ARGUMENT", `path ${why}`);
    return spoolOf(ctx).begin(path, size);
  } catch (err) {
    const reason = (err as MailError).reason ?? "INTERNAL";
    ctx.state.audit({
      client: call.client,
      action: "upload",
      account: null,
      decision: "error",
      summary: `${size} bytes refused: ${reason}`,
    });
    throw err;
  }
}

export function finishUpload(ctx: ServiceContext, call: Call, id: string) {
  try {
    const done = spoolOf(ctx).finish(id);
    audit(ctx, call, null, "allowed", `${id}: ${done.size} bytes`);
    return done;
  } catch (err) {
    audit(ctx, call, null, "error", `${id.slice(0, 64)}: ${(err as MailError).reason ?? "INTERNAL"}`);
    throw err;
  }
}

import { command, on, str, UsageError, userId } from "./context.js";

export const share = command({
  options: { off: { type: "boolean" } },
  async run(ctx) {
    const id = ctx.rest[0];
    if (!id) throw new UsageError("share NOTE_ID [--off]");
    const shared = !on(ctx, "off");
    const note = await ctx.app.notes.share({ userId: await userId(ctx), scopes: [] }, id, shared);
    ctx.out(`${shared ? "shared" : "unshared"} "${note.title}" (${note.id})\n`);
    return 0;
  },
});

export const move = command({
  options: { folder: { type: "string" }, unfiled: { type: "boolean" } },
  async run(ctx) {
    const id = ctx.rest[0];
    const folder = str(ctx, "folder");
    const unfiled = on(ctx, "unfiled");
    if (!id || (folder === undefined) === !unfiled)
      throw new UsageError("move NOTE_ID (--folder NAME | --unfiled)");
    // The domain refuses the folder name too; here the message points at the flag meant instead.
    if (folder?.trim().toLowerCase() === "unfiled")
      throw new UsageError('"unfiled" is not a folder name; use --unfiled');
    const note = await ctx.app.notes.file(
      { userId: await userId(ctx), scopes: [] },
      id,
      unfiled ? null : folder!,
    );
    ctx.out(
      `moved "${note.title}" (${note.id}) ${note.folder ? `into ${note.folder}` : "out of its folder"}\n`,
    );
    return 0;
  },
});

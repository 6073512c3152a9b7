import {
  checkDeckTags,
  checkEmbeddingsProvider,
  checkNoteCap,
  checkTimeZone,
  type SettingsPatch,
} from "../domain/accounts.js";
import { normalName } from "../domain/names.js";
import { machineTimeZone } from "../domain/time.js";
import { passwordProblem } from "../auth/secrets.js";
import { Passwords } from "../auth/users.js";
import { type Ctx, command, forFlag, on, str, UsageError, userId } from "./context.js";

const passwords = (ctx: Ctx) => new Passwords(ctx.app.store.accounts, ctx.app.store.auth);

export const settings = command({
  options: {
    "time-zone": { type: "string" },
    "review-tags": { type: "string" },
    plan: { type: "string" },
    "note-cap": { type: "string" },
    embeddings: { type: "string" },
    "embeddings-url": { type: "string" },
    "embeddings-model": { type: "string" },
  },
  async run(ctx) {
    const { accounts } = ctx.app;
    const tz = str(ctx, "time-zone");
    const tags = str(ctx, "review-tags");
    const cap = str(ctx, "note-cap");
    const plan = str(ctx, "plan");
    const provider = str(ctx, "embeddings");
    const url = str(ctx, "embeddings-url");
    const model = str(ctx, "embeddings-model");
    // Every value is checked by its rule before anything is written, and a refusal names its flag.
    const patch: SettingsPatch = {
      // "none" forgets the zone, so periods follow the server's.
      ...(tz !== undefined
        ? { timeZone: tz === "none" ? null : forFlag("--time-zone", () => checkTimeZone(tz)) }
        : {}),
      ...(tags !== undefined
        ? { reviewTags: forFlag("--review-tags", () => checkDeckTags(tags.split(/[,\s]+/).filter(Boolean))) }
        : {}),
      ...(plan !== undefined ? { plan } : {}),
      ...(cap !== undefined
        ? {
            noteCap: forFlag("--note-cap", () =>
              checkNoteCap(cap === "none" ? null : cap === "" ? Number.NaN : Number(cap)),
            ),
          }
        : {}),
    };
    if (provider) forFlag("--embeddings", () => checkEmbeddingsProvider(provider));
    const id = await userId(ctx);
    const deck = await accounts.updateSettings(id, patch);
    await accounts.setEmbeddings({
      ...(provider !== undefined ? { provider: provider || null } : {}),
      ...(url !== undefined ? { url: url || null } : {}),
      ...(model !== undefined ? { model: model || null } : {}),
    });
    if (deck) ctx.out(`review deck updated: ${deck.enrolled} notes enrolled, ${deck.dropped} dropped\n`);
    const s = await accounts.settings(id);
    const zone =
      s.timeZone ?? `not set (dexi-mcp uses its --time-zone, else this machine's: ${machineTimeZone()})`;
    ctx.out(
      `user: ${ctx.user}\ntime zone: ${zone}\nreview deck tags: ${s.reviewTags.join(" ") || "(none)"}\n`,
    );
    ctx.out(`plan: ${s.plan}\nnote cap: ${s.noteCap ?? "none"} (${s.notes} notes)\n`);
    const emb = await accounts.embeddings();
    ctx.out(
      `embeddings: ${emb.length ? emb.map(([k, v]) => `${k.slice(11)}=${v}`).join(" ") : "use (default)"}\n`,
    );
    return 0;
  },
});

/** A password from standard input: its first line, as typed or piped (`printf %s "$PW" | dexi ...`). */
async function passwordFrom(ctx: Ctx): Promise<string> {
  const line = (await ctx.input()).split(/\r?\n/)[0] ?? "";
  const problem = passwordProblem(line);
  if (problem) throw new UsageError(`password refused: ${problem}`);
  return line;
}

export const users = command({
  options: { team: { type: "string" }, "password-stdin": { type: "boolean" } },
  async run(ctx) {
    const [sub, name] = ctx.rest;
    if (sub === "add") {
      if (!name) throw new UsageError("users add NAME");
      const team = str(ctx, "team");
      // The password is read and checked first, so a refused one adds no user.
      const password = on(ctx, "password-stdin") ? await passwordFrom(ctx) : undefined;
      const user = await ctx.app.accounts.addUser(name, team || undefined);
      if (password !== undefined) await passwords(ctx).set(user.name, password);
      ctx.out(
        `added user ${user.name}${team ? ` to team ${team}` : ""}${password ? " with a password" : ""}\n`,
      );
      return 0;
    }
    if (sub === "password") {
      if (!name) throw new UsageError("users password NAME");
      if (!(await ctx.app.store.accounts.userByName(normalName(name))))
        throw new UsageError(`no user "${name}"`);
      await passwords(ctx).set(name, await passwordFrom(ctx));
      ctx.out(`password of ${name} changed\n`);
      return 0;
    }
    if (sub !== undefined && sub !== "list") throw new UsageError(`unknown users command "${sub}"`);
    for (const u of await ctx.app.accounts.users())
      ctx.out(`${u.name}\tteam=${u.team ?? "-"}\tnotes=${u.notes}\tplan=${u.plan}\n`);
    return 0;
  },
});

/** What a team change did to the user's shares (a share is with the team it was made in). */
const sharesEnded = (n: number, team?: string) =>
  n === 0
    ? ""
    : `; ${n} shared note${n === 1 ? " is" : "s are"} no longer shared${team ? ` (share again with ${team})` : ""}`;

export const teams = command({
  options: {},
  async run(ctx: Ctx) {
    const { accounts } = ctx.app;
    const [sub, a, b] = ctx.rest;
    switch (sub) {
      case "add":
        if (!a) throw new UsageError("teams add NAME");
        await accounts.addTeam(a);
        ctx.out(`added team ${a}\n`);
        return 0;
      case "join": {
        if (!a || !b) throw new UsageError("teams join TEAM USER");
        const { user, team, unshared } = await accounts.joinTeam(a, b);
        ctx.out(`${user} joined ${team}${sharesEnded(unshared, team)}\n`);
        return 0;
      }
      case "leave":
        if (!a) throw new UsageError("teams leave USER");
        ctx.out(`${a} left their team${sharesEnded(await accounts.leaveTeam(a))}\n`);
        return 0;
      case undefined:
      case "list":
        for (const t of await accounts.teams()) ctx.out(`${t.name}\t${t.members || "(no members)"}\n`);
        return 0;
      default:
        throw new UsageError(`unknown teams command "${sub}"`);
    }
  },
});

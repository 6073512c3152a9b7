/**
 * The account's own addresses (`address` and `aliases`) as part of the owner-confirmed policy, on a
 * real state.db: over any confirmed and requested alias sets, in any letter case and with or without
 * a display name, the daemon lets a From through exactly when it is in both; a new one waits, one
 * removed is gone at once, and the owner's confirmation makes config.toml's the own ones. A row
 * confirmed before own addresses were confirmed records config.toml's once, so a confirmed account
 * does not start holding every send.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { foreignEnvelopeFrom, ownAddresses } from "../src/compose/policy.js";
import { draftForSending } from "../src/compose/raw.js";
import { parseConfig } from "../src/config.js";
import { reconcilePolicies } from "../src/policy/service.js";
import { EndpointStore } from "../src/store/endpoints.js";
import { PolicyStore } from "../src/store/policy.js";
import { StateDb } from "../src/store/state.js";

const ADDRESS = "alice@example.com";
const POOL = ["me@other.example", "ceo@bank.example", "Info@Example.com", "sales@example.com"];

const config = (aliases: string[]) =>
  parseConfig(`
[[accounts]]
name = "work"
provider = "imap"
address = "${ADDRESS}"
aliases = ${JSON.stringify(aliases)}
username = "alice"
[accounts.imap]
host = "127.0.0.1"
port = 143
tls = "none"
[accounts.smtp]
host = "127.0.0.1"
port = 25
tls = "none"
[accounts.policy]
allow_expunge = false
allow_delete_folder = false
`);

let dir: string;
let state: StateDb;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-own-"));
  state = new StateDb(path.join(dir, "state.db"));
});

afterEach(() => {
  state.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What the owner's `chainmail policy confirm` stores: config.toml's request, nothing pending. */
function confirmAll(): void {
  const policy = new PolicyStore(state.db);
  const endpoints = new EndpointStore(state.db);
  const p = policy.get("work")!;
  if (p.pending) policy.put("work", p.pending, null);
  const e = endpoints.get("work")!;
  if (e.pending) endpoints.put("work", e.pending, null);
}

/** A spelling of an address the way config.toml or a draft may write it. */
const spelling = (address: string) =>
  fc.tuple(fc.boolean(), fc.boolean()).map(([upper, named]) => {
    const a = upper ? address.toUpperCase() : address.toLowerCase();
    return named ? `"Some One" <${a}>` : a;
  });
const aliasSet = fc
  .subarray(POOL)
  .chain((list) => (list.length ? fc.tuple(...list.map(spelling)) : fc.constant([] as string[])));

/** Whether a draft From `from` is the account's own (draft_send's check), by the effective config. */
async function fromIsOwn(account: ReturnType<typeof config>["accounts"][number], from: string) {
  const raw = Buffer.from(`From: ${from}\r\nTo: bob@example.com\r\nSubject: s\r\n\r\nhi\r\n`);
  return (await draftForSending(raw, account)).foreignFrom === undefined;
}

describe("own addresses in the confirmed policy (property)", () => {
  it("a From is own exactly when in both the confirmed and the requested sets; confirming makes config.toml's own", async () => {
    await fc.assert(
      fc.asyncProperty(
        aliasSet,
        aliasSet,
        fc.constantFrom(...POOL, ADDRESS),
        spelling(ADDRESS),
        async (c, f, probe, probeSpelling) => {
          state.db.exec("DELETE FROM policy; DELETE FROM endpoints;");
          reconcilePolicies(state, config(c));
          confirmAll();
          const bare = (list: string[]) =>
            new Set([ADDRESS, ...list.map((x) => (/<(.*)>/.exec(x)?.[1] ?? x).toLowerCase())]);
          const confirmed = bare(c);
          const requested = bare(f);
          const effective = reconcilePolicies(state, config(f)).accounts[0]!;
          const both = [...requested].filter((x) => confirmed.has(x)).sort();
          expect(ownAddresses(effective)).toEqual(both);
          const widening = [...requested].some((x) => !confirmed.has(x));
          expect(new PolicyStore(state.db).get("work")?.pending != null).toBe(widening);
          // Judged where the daemon judges a draft's From, in the spellings a draft may use.
          const draftSpelling = probe === ADDRESS ? probeSpelling : `"X" <${probe.toUpperCase()}>`;
          expect(await fromIsOwn(effective, draftSpelling)).toBe(both.includes(probe.toLowerCase()));
          // The owner confirms: config.toml's addresses are the own ones, nothing waits.
          confirmAll();
          const after = reconcilePolicies(state, config(f)).accounts[0]!;
          expect(ownAddresses(after)).toEqual([...requested].sort());
          expect(new PolicyStore(state.db).get("work")?.pending ?? null).toBeNull();
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("an account whose address has an internationalized domain", () => {
  it("sends From it once confirmed: the envelope From is compared in the own addresses' spelling", async () => {
    const idn = parseConfig(
      `[[accounts]]\nname = "work"\naddress = "Me@Bücher.example"\nusername = "me"\n[accounts.imap]\nhost = "127.0.0.1"\nport = 143\ntls = "none"\n`,
    );
    reconcilePolicies(state, idn);
    confirmAll();
    const effective = reconcilePolicies(state, idn).accounts[0]!;
    expect(ownAddresses(effective)).toEqual(["me@xn--bcher-kva.example"]);
    expect(foreignEnvelopeFrom(effective, effective.address)).toBeUndefined();
    expect(await fromIsOwn(effective, "me@bücher.example")).toBe(true);
    expect(foreignEnvelopeFrom(effective, "me@other.example")).toBe("me@other.example");
  });
});

describe("the daemon's own_addresses", () => {
  it("cannot be written into config.toml", () => {
    const text = `${JSON.stringify(config([]))}`;
    expect(text).not.toContain("own_addresses");
    const toml = `[[accounts]]\nname = "w"\naddress = "a@x.example"\n[accounts.imap]\nhost = "h"\nport = 143\ntls = "none"\n[accounts.policy]\nown_addresses = ["ceo@bank.example"]\n`;
    expect(() => parseConfig(toml)).toThrow(/own_addresses/);
  });
});

describe("a policy row confirmed before own addresses were confirmed", () => {
  it("records config.toml's addresses once, audited, and holds nothing; a later alias waits", async () => {
    const file = config(["me@other.example"]);
    reconcilePolicies(state, file);
    confirmAll();
    // What an earlier chainmail stored: the gates without own_addresses.
    const policy = new PolicyStore(state.db);
    const { own_addresses: _new, ...old } = JSON.parse(policy.get("work")!.confirmed) as Record<
      string,
      unknown
    >;
    policy.put("work", JSON.stringify(old), null);

    const effective = reconcilePolicies(state, file).accounts[0]!;
    expect(ownAddresses(effective)).toEqual(["alice@example.com", "me@other.example"]);
    expect(policy.get("work")?.pending).toBeNull();
    expect(JSON.parse(policy.get("work")!.confirmed).own_addresses).toEqual([
      "alice@example.com",
      "me@other.example",
    ]);
    expect(await fromIsOwn(effective, "me@other.example")).toBe(true);
    const recorded = state.readAudit({ action: "policy.recorded" });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.summary).toContain("[alice@example.com, me@other.example]");

    // Recorded once: a new alias now is a widening like any other.
    const wider = reconcilePolicies(state, config(["me@other.example", "ceo@bank.example"])).accounts[0]!;
    expect(policy.get("work")?.pending).not.toBeNull();
    expect(await fromIsOwn(wider, "ceo@bank.example")).toBe(false);
    expect(state.readAudit({ action: "policy.recorded" })).toHaveLength(1);
  });
});

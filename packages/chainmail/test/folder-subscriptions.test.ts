/**
 * Subscriptions follow create, rename and delete: what a client that shows subscribed folders only
 * (LSUB, LIST (SUBSCRIBED)) lists after each folder call, asked on a session of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { type RawImap, rawImap, subscribedFolders } from "./support/raw-imap.js";

let env: MailEnv;
let imap: RawImap;

beforeAll(async () => {
  env = await startMailEnv({ work: { allow_delete_folder: true } });
  await env.confirmPolicy();
  imap = await rawImap(env.dv.port, "alice", "alice-secret-pw");
});
afterAll(async () => {
  imap?.close();
  await env?.stop();
});

async function seen(): Promise<string[]> {
  const { lsub, listSubscribed } = await subscribedFolders(imap);
  // both ways of asking must agree, or one kind of client sees something else
  expect(listSubscribed).toEqual(lsub);
  return lsub;
}

describe("folder subscriptions", () => {
  it("a created folder and its new parents are subscribed", async () => {
    await env.client.createFolder({ account: "work", name: "Clients/Acme" });
    expect(await seen()).toEqual(expect.arrayContaining(["Clients", "Clients/Acme"]));
  });

  it("create_folder on an existing unsubscribed folder subscribes it", async () => {
    await imap.command('CREATE "Quiet"');
    expect(await seen()).not.toContain("Quiet");
    await env.client.createFolder({ account: "work", name: "Quiet" });
    expect(await seen()).toContain("Quiet");
  });

  it("a rename moves the subscription, subfolders included, and keeps an unsubscribed one unsubscribed", async () => {
    await env.client.createFolder({ account: "work", name: "Old/Sub" });
    await env.client.createFolder({ account: "work", name: "Old/Hidden" });
    await imap.command('UNSUBSCRIBE "Old/Hidden"');
    expect(await seen()).toEqual(expect.arrayContaining(["Old", "Old/Sub"]));

    expect(await env.client.renameFolder({ account: "work", from: "Old", to: "Archive2024/New" })).toEqual({
      account: "work",
      name: "Archive2024/New",
    });
    const after = await seen();
    expect(after).toEqual(expect.arrayContaining(["Archive2024", "Archive2024/New", "Archive2024/New/Sub"]));
    expect(after.filter((n) => n === "Old" || n.startsWith("Old/"))).toEqual([]);
    expect(after).not.toContain("Archive2024/New/Hidden");
    // the folder itself is still there, only unsubscribed as it was
    const all = (await imap.command('LIST "" "Archive2024/New/*"')).join("\n");
    expect(all).toContain("Archive2024/New/Hidden");
  });

  it("a deleted folder leaves no subscription behind", async () => {
    await env.client.createFolder({ account: "work", name: "Doomed" });
    expect(await seen()).toContain("Doomed");
    expect(await env.client.deleteFolder({ account: "work", name: "Doomed" })).toMatchObject({
      deleted: true,
    });
    expect(await seen()).not.toContain("Doomed");
  });

  it("delete_folder of a folder another client deleted drops the subscription it left behind", async () => {
    await imap.command('CREATE "Ghost"');
    await imap.command('SUBSCRIBE "Ghost"');
    await imap.command('DELETE "Ghost"');
    expect(await seen()).toContain("Ghost");
    expect(await env.client.deleteFolder({ account: "work", name: "Ghost" })).toMatchObject({
      deleted: false,
    });
    expect(await seen()).not.toContain("Ghost");
  });
});

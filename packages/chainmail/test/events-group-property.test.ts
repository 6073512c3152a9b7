/**
 * A consumer group against a real Dovecot and daemon (fast-check): messages appended to two accounts
 * at random moments, synced now and then, while the group reads in a loop with random limits and
 * waits, some replies "lost" (defer_ack and never acknowledged, as by a reader that died with the
 * page: the page holds the group for the lease, here 300 ms, then goes to the next read): the
 * group's new-mail events are exactly the appended messages, each once.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { startDaemon } from "../src/daemon/server.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv();
  // A page never acknowledged holds its group for the lease: a short one, so a run does not wait 10 s.
  env.client.close();
  await env.daemon.stop();
  env.daemon = await startDaemon({ home: env.home, log: () => undefined, groupLeaseMs: 300 });
  env.client = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
  // The first sync of each folder is a gap; the property's mail comes after it.
  await env.client.cacheSync({ accounts: ["work", "home"] });
});
afterAll(async () => {
  await env?.stop();
});

let run = 0;

describe("a group reading in a loop while mail arrives (property)", () => {
  it("gets each new message once, whatever the limits, waits and lost replies", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            account: fc.constantFrom("work", "home"),
            // Milliseconds before the message lands: the moments are random, not the assertion.
            delay: fc.integer({ min: 0, max: 30 }),
            sync: fc.boolean(),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.array(
          fc.record({ limit: fc.integer({ min: 1, max: 3 }), wait: fc.boolean(), lost: fc.boolean() }),
          { minLength: 1, maxLength: 5 },
        ),
        async (arrivals, reads) => {
          run++;
          const group = `prop-${run}`;
          const c = env.client;
          // The group's first read starts it at the log's end.
          await c.readEvents({ group });
          const subjects: string[] = [];
          let done = false;
          const producer = (async () => {
            for (const [i, a] of arrivals.entries()) {
              await new Promise((r) => setTimeout(r, a.delay));
              const subject = `P${run}.${i} ${a.account}`;
              subjects.push(subject);
              await env.dv.appendMessage(
                a.account === "work" ? "alice" : "bob",
                "INBOX",
                buildMessage({
                  from: "Eve <eve@example.com>",
                  to: ["x@example.com"],
                  subject,
                  date: new Date("2026-03-01T10:00:00Z"),
                  messageId: `<p${run}.${i}@example.com>`,
                  text: "hi\n",
                }),
              );
              if (a.sync) await c.cacheSync({ accounts: [a.account] });
            }
            await c.cacheSync({ accounts: ["work", "home"] });
            done = true;
          })();
          const got: string[] = [];
          // Reads go on while mail arrives; once all of it is in the log, until the group has
          // acknowledged all of it (a lost page may hold the group a while: those reads wait it out).
          const settled = async () =>
            (await c.watchGroups()).groups.find((g) => g.name === group)?.pending === 0;
          for (let i = 0, after = 0; after < 100; i++) {
            const shape = reads[i % reads.length]!;
            const allIn = done;
            if (allIn) after++;
            const lost = shape.lost && !allIn;
            const r = await c.readEvents({
              group,
              limit: shape.limit,
              // Once all is in and some is unacknowledged, a read waits out a lost page's lease.
              wait_seconds: (allIn ? !(await settled()) : shape.wait) ? 1 : 0,
              ...(lost ? { defer_ack: true } : {}),
            });
            if (lost) continue;
            for (const e of r.events) if (e.kind === "new") got.push(e.row!.subject);
            if (allIn && r.events.length === 0 && (await settled())) break;
          }
          await producer;
          expect(got).toEqual(expect.arrayContaining(subjects));
          expect(got).toHaveLength(subjects.length);
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});

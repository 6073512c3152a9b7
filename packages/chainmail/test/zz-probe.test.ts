import net from "node:net";
import { it } from "vitest";
import { startDovecot } from "../src/testing/dovecot.js";
import { buildMessage } from "../src/testing/corpus.js";

class Raw {
  buf = "";
  sock: net.Socket;
  n = 0;
  constructor(port: number) {
    this.sock = net.connect(port, "127.0.0.1");
    this.sock.on("data", (d) => { this.buf += d.toString(); });
  }
  async until(re: RegExp) { const t = Date.now(); while (!re.test(this.buf)) { if (Date.now()-t>5000) throw new Error("timeout: "+this.buf); await new Promise(r=>setTimeout(r,10)); } const out=this.buf; this.buf=""; return out; }
  async cmd(...lines: string[]) { const tags: string[] = []; for (const l of lines) { const t = `a${++this.n}`; tags.push(t); this.sock.write(`${t} ${l}\r\n`); } return this.until(new RegExp(`^${tags[tags.length-1]} (OK|NO|BAD)`, "m")); }
}

it("probe", async () => {
  const dv = await startDovecot({ users: [{ name: "alice", password: "pw-alice-123" }] });
  try {
    const c = await dv.connect("alice");
    await c.mailboxCreate("P");
    for (let i = 0; i < 10; i++) await c.append("P", buildMessage({ from: "a <a@x.com>", to: ["b@x.com"], subject: `m${i}`, date: new Date(Date.UTC(2026,0,1+i)), messageId: `<m${i}@x>`, text: "hi\n" }), [], new Date(Date.UTC(2026,0,1+i)));
    const r = new Raw(dv.port);
    await r.until(/^\* OK/m);
    console.log(await r.cmd("LOGIN alice pw-alice-123"));
    console.log(await r.cmd("CAPABILITY"));
    console.log(await r.cmd("ENABLE CONDSTORE QRESYNC"));
    console.log(await r.cmd("EXAMINE P"));
    console.log(await r.cmd("UID SORT RETURN (PARTIAL 1:3 COUNT SAVE) (ARRIVAL) UTF-8 ALL", "UID FETCH $ (UID FLAGS)"));
    console.log(await r.cmd("UID SORT RETURN (PARTIAL -1:-3 COUNT) (ARRIVAL) UTF-8 ALL"));
    console.log(await r.cmd("UID SORT RETURN (PARTIAL -1:-3 COUNT SAVE) (REVERSE ARRIVAL) UTF-8 ALL", "UID FETCH $ (UID FLAGS)"));
    console.log(await r.cmd("UID SORT RETURN (ALL COUNT SAVE) (ARRIVAL) UTF-8 ALL", "UID FETCH $ (UID)"));
    // another client: expunge 3, flag 5, append
    await c.mailboxOpen("P");
    await c.messageFlagsAdd("7", ["\\Flagged"]);
    await c.messageDelete("3");
    await c.messageFlagsAdd("8", ["\\Seen"]);
    await c.append("P", buildMessage({ from: "a <a@x.com>", to: ["b@x.com"], subject: `new`, date: new Date(), messageId: `<new@x>`, text: "hi\n" }));
    await c.messageDelete("1");
    console.log(await r.cmd("NOOP"));
    await c.logout();
    r.sock.destroy();
  } finally { await dv.stop(); }
}, 60000);

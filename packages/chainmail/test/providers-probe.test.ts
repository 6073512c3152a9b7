import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeAddress, readClientConfig } from "../src/providers/probe.js";
import {
  clientConfig,
  type DnsServer,
  type HttpServer,
  startDns,
  startHttp,
} from "./support/probe-servers.js";

// Every look-up goes to these two local servers: the probe never reaches the internet from a test.
let dns: DnsServer;
let web: HttpServer;
/** What the endless document's server wrote before the probe hung up. */
let endlessSent = 0;

const AUTO = clientConfig(
  [
    // A server without TLS comes first: it is skipped, the password never crosses in the clear.
    { host: "plain.auto.test", port: 143, socket: "plain" },
    { host: "imap.auto.test", port: 993, socket: "SSL", username: "%EMAILLOCALPART%" },
    { type: "pop3", host: "pop.auto.test", port: 995, socket: "SSL" },
  ],
  [{ host: "smtp.auto.test", port: 587, socket: "STARTTLS" }],
);

beforeAll(async () => {
  dns = await startDns({
    "hosted-google.test": {
      MX: [
        { preference: 5, exchange: "alt1.aspmx.l.google.com" },
        { preference: 1, exchange: "aspmx.l.google.com" },
      ],
    },
    "hosted-ms.test": { MX: [{ preference: 0, exchange: "hosted-ms-test.mail.protection.outlook.com" }] },
    "srv.test": { MX: [{ preference: 10, exchange: "mx.srv.test" }] },
    "_imaps._tcp.srv.test": {
      SRV: [
        { priority: 20, weight: 1, port: 993, target: "backup.srv.test" },
        { priority: 10, weight: 1, port: 993, target: "imap.srv.test" },
      ],
    },
    "_imap._tcp.srv.test": { SRV: [{ priority: 0, weight: 1, port: 143, target: "starttls.srv.test" }] },
    // RFC 6186: a target of "." says the service is not offered here; _submission is used.
    "_submissions._tcp.srv.test": { SRV: [{ priority: 0, weight: 0, port: 0, target: "." }] },
    "_submission._tcp.srv.test": { SRV: [{ priority: 0, weight: 1, port: 587, target: "smtp.srv.test" }] },
    // Both SRV (IMAP only) and an autoconfig document: SRV wins for IMAP, autoconfig gives SMTP.
    "_imaps._tcp.both.test": { SRV: [{ priority: 0, weight: 1, port: 9993, target: "imap.both.test" }] },
    // An autoconfig document that names Gmail's servers makes the account a google one.
    "gapps.test": { MX: [{ preference: 10, exchange: "mx.gapps.test" }] },
  });
  web = await startHttp({
    "/autoconfig.auto.test/mail/config-v1.1.xml": AUTO,
    "/both.test/.well-known/autoconfig/mail/config-v1.1.xml": AUTO.replaceAll("auto.test", "both.test"),
    "/autoconfig.thunderbird.net/v1.1/isp.test": clientConfig(
      [{ host: "mail.isp.test", port: 143, socket: "STARTTLS" }],
      [{ host: "mail.isp.test", port: 465, socket: "SSL" }],
    ),
    "/autoconfig.gapps.test/mail/config-v1.1.xml": clientConfig(
      [{ host: "imap.gmail.com", port: 993, socket: "SSL" }],
      [{ host: "smtp.gmail.com", port: 465, socket: "SSL" }],
    ),
    "/autoconfig.bad.test/mail/config-v1.1.xml": "<clientConfig><emailProvider><incomingServer",
    // A document without end: XML padding as fast as the connection takes it, until it is closed
    "/autoconfig.endless.test/mail/config-v1.1.xml": (res) => {
      res.writeHead(200, { "content-type": "text/xml" });
      const chunk = `<!-- ${"x".repeat(64 * 1024)} -->`;
      const more = () => {
        while (!res.destroyed && res.write(chunk)) endlessSent += chunk.length;
        if (!res.destroyed) res.once("drain", more);
      };
      res.write("<clientConfig>");
      more();
    },
    // One that says its size up front
    "/autoconfig.large.test/mail/config-v1.1.xml": `<clientConfig>${" ".repeat(300 * 1024)}</clientConfig>`,
  });
});

afterAll(async () => {
  await dns?.close();
  await web?.close();
});

const local = () => ({ dnsServers: [dns.address], httpBase: web.base, timeoutMs: 3000 });
const step = (r: Awaited<ReturnType<typeof probeAddress>>, source: string) =>
  r.steps.find((s) => s.source === source);

describe("accounts probe", () => {
  it("answers a known domain from the presets without a look-up", async () => {
    const before = dns.asked.length + web.asked.length;
    const r = await probeAddress("Someone <me@GoogleMail.com>", local());
    // The one address model (compose/addresses.ts) spells a domain in lowercase IDNA ASCII.
    expect(r).toMatchObject({
      address: "me@googlemail.com",
      domain: "googlemail.com",
      provider: "google",
      imap: { host: "imap.gmail.com", port: 993, tls: "tls", source: "preset" },
      smtp: { host: "smtp.gmail.com", port: 465, tls: "tls", source: "preset" },
      username: "me@googlemail.com",
    });
    expect(r.note).toMatch(/app password/);
    expect(r.steps).toEqual([
      expect.objectContaining({ source: "preset", query: "googlemail.com", status: "found" }),
    ]);
    expect(dns.asked.length + web.asked.length).toBe(before);
    for (const [addr, provider] of [
      ["a@outlook.com", "microsoft"],
      ["a@hotmail.com", "microsoft"],
      ["a@fastmail.com", "fastmail"],
      ["a@me.com", "icloud"],
      ["a@yahoo.com", "yahoo"],
    ] as const)
      expect((await probeAddress(addr, local())).provider).toBe(provider);
  });

  it("finds a custom domain hosted by Google or Microsoft by its MX records", async () => {
    const g = await probeAddress("boss@hosted-google.test", local());
    expect(g).toMatchObject({
      provider: "google",
      imap: { host: "imap.gmail.com", source: "mx" },
      smtp: { host: "smtp.gmail.com", source: "mx" },
    });
    expect(step(g, "mx")).toMatchObject({ status: "found", provider: "google" });
    expect(dns.asked).toContain("MX hosted-google.test");
    const m = await probeAddress("boss@hosted-ms.test", local());
    expect(m).toMatchObject({
      provider: "microsoft",
      imap: { host: "outlook.office365.com", port: 993, tls: "tls", source: "mx" },
      smtp: { host: "smtp.office365.com", port: 587, tls: "starttls", source: "mx" },
    });
  });

  it("reads DNS SRV records (RFC 6186), implicit TLS first (RFC 8314), lowest priority first", async () => {
    const r = await probeAddress("me@srv.test", local());
    expect(r).toMatchObject({
      provider: "imap",
      imap: { host: "imap.srv.test", port: 993, tls: "tls", source: "srv" },
      smtp: { host: "smtp.srv.test", port: 587, tls: "starttls", source: "srv" },
      username: "me@srv.test",
    });
    expect(step(r, "mx")).toMatchObject({ status: "none", detail: expect.stringContaining("mx.srv.test") });
    for (const name of ["_imaps._tcp", "_imap._tcp", "_submissions._tcp", "_submission._tcp"])
      expect(dns.asked).toContain(`SRV ${name}.srv.test`);
  });

  it("reads the domain's autoconfig document: TLS servers only, the username pattern filled in", async () => {
    const r = await probeAddress("jo@auto.test", local());
    expect(r).toMatchObject({
      provider: "imap",
      imap: { host: "imap.auto.test", port: 993, tls: "tls", source: "autoconfig" },
      smtp: { host: "smtp.auto.test", port: 587, tls: "starttls", source: "autoconfig" },
      username: "jo",
    });
    expect(step(r, "autoconfig")?.query).toBe("https://autoconfig.auto.test/mail/config-v1.1.xml");
    expect(step(r, "srv")).toMatchObject({ status: "none" });
    expect(step(r, "ispdb")).toMatchObject({ status: "none", detail: "HTTP 404" });
  });

  it("takes each server from the most trusted source that names it", async () => {
    const r = await probeAddress("me@both.test", local());
    expect(r.imap).toEqual({ host: "imap.both.test", port: 9993, tls: "tls", source: "srv" });
    expect(r.smtp).toEqual({ host: "smtp.both.test", port: 587, tls: "starttls", source: "well-known" });
    expect(step(r, "well-known")?.query).toBe(
      "https://both.test/.well-known/autoconfig/mail/config-v1.1.xml",
    );
  });

  it("falls back to Mozilla's ISPDB", async () => {
    const r = await probeAddress("me@isp.test", local());
    expect(r).toMatchObject({
      imap: { host: "mail.isp.test", port: 143, tls: "starttls", source: "ispdb" },
      smtp: { host: "mail.isp.test", port: 465, tls: "tls", source: "ispdb" },
    });
    expect(step(r, "ispdb")?.query).toBe("https://autoconfig.thunderbird.net/v1.1/isp.test");
  });

  it("names a provider whose servers a document points at", async () => {
    const r = await probeAddress("me@gapps.test", local());
    expect(r.provider).toBe("google");
    expect(r.note).toMatch(/app password/);
  });

  it("finds nothing in a broken document and says so", async () => {
    const r = await probeAddress("me@bad.test", local());
    expect(r.imap).toBeNull();
    expect(r.smtp).toBeNull();
    expect(step(r, "autoconfig")).toMatchObject({ status: "none" });
    expect(step(r, "mx")).toMatchObject({ status: "none", detail: "ENOTFOUND" });
  });

  it("stops reading a document past 256 KiB instead of buffering what the server sends until the deadline", async () => {
    const r = await probeAddress("me@endless.test", { ...local(), timeoutMs: 20_000 });
    expect(step(r, "autoconfig")).toMatchObject({ status: "failed", detail: "document too large" });
    // (not "ETIMEOUT": it hung up at the bound, and read what the socket buffers held, not seconds of data)
    expect(endlessSent).toBeLessThan(64 * 1024 * 1024);
    const large = await probeAddress("me@large.test", local());
    expect(step(large, "autoconfig")).toMatchObject({ status: "failed", detail: "document too large" });
  });

  it("refuses a string that is not one address", async () => {
    for (const bad of ["nope", "a@b@c", "a@-bad-.test", "a@x.test, b@y.test"])
      await expect(probeAddress(bad, local())).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
  });
});

describe("accounts probe offline", () => {
  let refusing: DnsServer;
  let silent: DnsServer;
  let gone: string;
  beforeAll(async () => {
    refusing = await startDns({}, "refuse");
    silent = await startDns({}, "silent");
    // An HTTP base nobody listens on: every autoconfig look-up fails to connect.
    const h = await startHttp({});
    gone = h.base;
    await h.close();
  });
  afterAll(async () => {
    await refusing?.close();
    await silent?.close();
  });

  it("still answers gmail.com from the presets", async () => {
    for (const server of [refusing, silent]) {
      const r = await probeAddress("me@gmail.com", {
        dnsServers: [server.address],
        httpBase: gone,
        timeoutMs: 1000,
      });
      expect(r).toMatchObject({ provider: "google", imap: { host: "imap.gmail.com", source: "preset" } });
    }
    expect(silent.asked).toEqual([]);
  });

  it("says which look-ups failed when DNS refuses and the network is down", async () => {
    const r = await probeAddress("me@unknown.test", {
      dnsServers: [refusing.address],
      httpBase: gone,
      timeoutMs: 2000,
    });
    expect(r.imap).toBeNull();
    expect(r.provider).toBe("imap");
    expect(r.steps.map((s) => [s.source, s.status])).toEqual([
      ["preset", "none"],
      ["mx", "failed"],
      ["srv", "failed"],
      ["autoconfig", "failed"],
      ["well-known", "failed"],
      ["ispdb", "failed"],
    ]);
    expect(step(r, "mx")?.detail).toBe("EREFUSED");
    expect(step(r, "autoconfig")?.detail).toBe("ECONNREFUSED");
    expect(refusing.asked).toContain("MX unknown.test");
  });

  it("gives up on a DNS server that never answers within its deadline", async () => {
    const t0 = Date.now();
    const r = await probeAddress("me@unknown.test", {
      dnsServers: [silent.address],
      httpBase: gone,
      timeoutMs: 1000,
    });
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(step(r, "mx")).toMatchObject({ status: "failed", detail: "ETIMEOUT" });
    expect(step(r, "srv")).toMatchObject({ status: "failed", detail: "ETIMEOUT" });
    expect(silent.asked).toContain("MX unknown.test");
  });

  it("asks nothing with the network off", async () => {
    const before = silent.asked.length;
    const r = await probeAddress("me@unknown.test", { dnsServers: [silent.address], network: false });
    expect(r.steps.slice(1).every((s) => s.status === "skipped")).toBe(true);
    expect(silent.asked.length).toBe(before);
  });
});

describe("readClientConfig", () => {
  it("keeps only well-formed TLS servers", () => {
    const doc = clientConfig(
      [
        { host: "evil host;rm", port: 993, socket: "SSL" },
        { host: "imap.x.test", port: 70000, socket: "SSL" },
        { host: "imap.%EMAILDOMAIN%", port: 993, socket: "STARTTLS" },
      ],
      [{ host: "smtp.x.test", port: 25, socket: "plain" }],
    );
    expect(readClientConfig(doc, "me", "x.test")).toEqual({
      imap: { host: "imap.x.test", port: 993, tls: "starttls" },
      username: "me@x.test",
    });
    expect(readClientConfig("not xml at all", "me", "x.test")).toBeNull();
    expect(readClientConfig("<clientConfig/>", "me", "x.test")).toBeNull();
  });

  it("never yields a malformed host or port, whatever the document says (property)", () => {
    const field = fc.oneof(
      fc.string(),
      fc.constantFrom(
        "imap.x.test",
        "%EMAILDOMAIN%",
        "a b",
        "x\ny.test",
        "-x.test",
        "993",
        "0",
        "65536",
        "SSL",
        "STARTTLS",
      ),
    );
    fc.assert(
      fc.property(field, field, field, field, (host, port, socket, user) => {
        const esc = (v: string) => v.replace(/&/g, "&amp;").replace(/</g, "&lt;");
        const doc = `<clientConfig><emailProvider id="x"><incomingServer type="imap"><hostname>${esc(host)}</hostname><port>${esc(port)}</port><socketType>${esc(socket)}</socketType><username>${esc(user)}</username></incomingServer></emailProvider></clientConfig>`;
        const r = readClientConfig(doc, "me", "x.test");
        if (r?.imap) {
          expect(r.imap.host).toMatch(/^[a-z0-9.-]+$/);
          expect(r.imap.port).toBeGreaterThanOrEqual(1);
          expect(r.imap.port).toBeLessThanOrEqual(65535);
          expect(["tls", "starttls"]).toContain(r.imap.tls);
        }
      }),
    );
  });
});

// A local DNS server (UDP on 127.0.0.1, packets by dns-packet) and a local HTTP server for the probe
// tests: the probe is pointed at them and never reaches the internet.
import dgram from "node:dgram";
import http from "node:http";
import type { AddressInfo } from "node:net";
import dnsPacket from "dns-packet";

export type Zone = Record<
  string,
  {
    MX?: Array<{ preference: number; exchange: string }>;
    SRV?: Array<{ priority: number; weight: number; port: number; target: string }>;
  }
>;

export interface DnsServer {
  /** `127.0.0.1:PORT`, for the probe's dnsServers. */
  address: string;
  /** Every question asked, as `TYPE name`. */
  asked: string[];
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, NXDOMAIN: 3, REFUSED: 5 } as const;
const AA_RD_RA = 0x0400 | 0x0100 | 0x0080;

/**
 * mode "answer": the zone's records, NXDOMAIN for a name it lacks, an empty answer for a type it lacks;
 * "refuse": REFUSED to every question; "silent": never answers.
 */
export async function startDns(
  zone: Zone,
  mode: "answer" | "refuse" | "silent" = "answer",
): Promise<DnsServer> {
  const sock = dgram.createSocket("udp4");
  const asked: string[] = [];
  sock.on("message", (msg, from) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions?.[0];
    if (!question) return;
    asked.push(`${question.type} ${question.name}`);
    if (mode === "silent") return;
    const entry = zone[question.name.toLowerCase()];
    const rcode: number = mode === "refuse" ? RCODE.REFUSED : entry ? RCODE.NOERROR : RCODE.NXDOMAIN;
    const answers: dnsPacket.Answer[] = [];
    if (rcode === RCODE.NOERROR && entry) {
      if (question.type === "MX")
        for (const data of entry.MX ?? []) answers.push({ type: "MX", name: question.name, ttl: 60, data });
      else if (question.type === "SRV")
        for (const data of entry.SRV ?? []) answers.push({ type: "SRV", name: question.name, ttl: 60, data });
    }
    const out = dnsPacket.encode({
      type: "response",
      id: q.id ?? 0,
      flags: AA_RD_RA | rcode,
      questions: [question],
      answers,
    });
    sock.send(out, from.port, from.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, "127.0.0.1", resolve));
  const { port } = sock.address();
  return {
    address: `127.0.0.1:${port}`,
    asked,
    close: () => new Promise<void>((resolve) => sock.close(() => resolve())),
  };
}

export interface HttpServer {
  /** The probe's httpBase: `https://HOST/PATH` is asked as `BASE/HOST/PATH`. */
  base: string;
  /** Every path asked. */
  asked: string[];
  close(): Promise<void>;
}

/** Serves `files` by path (`/autoconfig.example.org/mail/config-v1.1.xml`); 404 for the rest. */
export async function startHttp(
  files: Record<string, string | ((res: http.ServerResponse) => void)>,
): Promise<HttpServer> {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    asked.push(path);
    const body = files[path];
    if (body === undefined) {
      res.writeHead(404).end("not found");
      return;
    }
    // (a function answers as it likes: a body without end, say)
    if (typeof body === "function") body(res);
    else res.writeHead(200, { "content-type": "text/xml" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clientConfig document (Thunderbird autoconfig 1.1) with these servers. */
export function clientConfig(
  incoming: Array<{ type?: string; host: string; port: number; socket: string; username?: string }>,
  outgoing: Array<{ host: string; port: number; socket: string }>,
): string {
  const inc = incoming
    .map(
      (s) =>
        `<incomingServer type="${s.type ?? "imap"}"><hostname>${s.host}</hostname><port>${s.port}</port><socketType>${s.socket}</socketType><username>${s.username ?? "%EMAILADDRESS%"}</username><authentication>password-cleartext</authentication></incomingServer>`,
    )
    .join("");
  const out = outgoing
    .map(
      (s) =>
        `<outgoingServer type="smtp"><hostname>${s.host}</hostname><port>${s.port}</port><socketType>${s.socket}</socketType><username>%EMAILADDRESS%</username></outgoingServer>`,
    )
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<clientConfig version="1.1"><emailProvider id="x"><domain>x</domain><displayName>X</displayName>${inc}${out}</emailProvider></clientConfig>`;
}

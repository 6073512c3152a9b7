/**
 * TLS trust for one mail server: the system CAs plus the server's `ca_file`, and a certificate error
 * in its own words. Both IMAP (imapflow) and SMTP (nodemailer) take these options as their `tls`.
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import tls from "node:tls";
import { MailError } from "./errors.js";

/** A server table as far as TLS goes: its host, and the PEM of its `ca_file` when one is set. */
export interface TlsTrust {
  host: string;
  ca_file?: string | undefined;
  ca?: string | undefined;
}

/**
 * Reads and checks a `ca_file` at config load: undefined and a problem when it is unreadable or holds
 * no PEM certificate (X509Certificate parses the first one; a file of only a key would fail here).
 */
export function readCaFile(file: string): { pem: string } | { problem: string } {
  let pem: string;
  try {
    pem = fs.readFileSync(file, "utf8");
  } catch (err) {
    return { problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----"))
    return { problem: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)" };
  try {
    new X509Certificate(pem);
  } catch {
    return { problem: "holds a PEM certificate that cannot be parsed" };
  }
  return { pem };
}

let extraCas: string[] | undefined;

/**
 * NODE_EXTRA_CA_CERTS as Node reads it: Node adds it to its default CAs only, and an explicit `ca`
 * replaces those, so a server with a ca_file would lose it without this.
 */
function nodeExtraCas(): string[] {
  if (extraCas) return extraCas;
  const file = process.env["NODE_EXTRA_CA_CERTS"];
  extraCas = [];
  if (file) {
    try {
      extraCas = [fs.readFileSync(file, "utf8")];
    } catch {
      // Node itself only warns about an unreadable file at start; so do we: nothing is added.
    }
  }
  return extraCas;
}

/** The `tls` options of a connection to this server: Node's defaults unless it has a ca_file. */
export function tlsOptions(server: TlsTrust): { ca?: string[] } {
  if (!server.ca) return {};
  return { ca: [...tls.rootCertificates, ...nodeExtraCas(), server.ca] };
}

/** Node's certificate verification codes, in the words the user reads. */
const CERT_WORDS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "is signed by a self-signed certificate that is not trusted",
  CERT_HAS_EXPIRED: "has expired",
  CERT_NOT_YET_VALID: "is not valid yet",
  ERR_TLS_CERT_ALTNAME_INVALID: "is for another name",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "is signed by an unknown authority",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "is signed by an unknown authority",
  UNABLE_TO_GET_ISSUER_CERT: "is signed by an unknown authority",
  CERT_SIGNATURE_FAILURE: "has a signature that does not verify",
  CERT_REVOKED: "has been revoked",
};

/**
 * A certificate failure on this server as SERVER_UNAVAILABLE with a hint that names ca_file: the seed's
 * reasons are fixed, and SERVER_UNAVAILABLE is what a server that cannot be used safely is (test_account
 * is documented for it); only its generic "try again later" would be wrong, so the hint replaces it.
 * Undefined for an error that is not a certificate failure.
 */
export function certificateError(
  err: unknown,
  server: { host: string },
  section: "imap" | "smtp",
): MailError | undefined {
  const e = err as
    | { code?: unknown; originalCode?: unknown; reason?: unknown; message?: unknown }
    | undefined;
  // nodemailer reports a socket error as ESOCKET and keeps Node's code as originalCode.
  const which = [e?.code, e?.originalCode].find(
    (c): c is string => typeof c === "string" && Object.hasOwn(CERT_WORDS, c),
  );
  if (!which) return undefined;
  // Node's account of a wrong name quotes the certificate, the server's words: detail, not message.
  const names =
    which === "ERR_TLS_CERT_ALTNAME_INVALID"
      ? typeof e?.reason === "string"
        ? e.reason
        : typeof e?.message === "string"
          ? e.message
          : undefined
      : undefined;
  return new MailError(
    "SERVER_UNAVAILABLE",
    `the certificate of ${server.host} ${CERT_WORDS[which]}: set ca_file in [accounts.${section}] or fix the server`,
    `Retrying will not help. If the server is yours or your company's, the user sets ca_file = "/path/ca.pem" (the PEM of the CA that signed it) in the account's [accounts.${section}] in config.toml; otherwise the server's certificate must be fixed. Run test_account to check.`,
    names,
  );
}

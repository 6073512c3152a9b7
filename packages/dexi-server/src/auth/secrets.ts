import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** A fresh unguessable value (256 bits), with a prefix saying what it is when one turns up in a log. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

/** How codes and tokens are kept: their SHA-256, so a copy of the database holds no usable token. */
export function hashSecret(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** The PKCE S256 challenge of a verifier (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A code verifier as RFC 7636 §4.1 allows it: 43 to 128 unreserved characters. */
export const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;

// scrypt at N=2^15, r=8: 32 MiB and tens of milliseconds per guess, so a stolen hash resists a GPU.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const MAXMEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_BYTES, { N: n, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$key`, the parameters kept beside the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split("$");
  if (kind !== "scrypt" || !salt || !key) return false;
  const got = await derive(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  const want = Buffer.from(key, "base64url");
  return got.length === want.length && timingSafeEqual(got, want);
}

/** A hash nobody's password matches, checked against for unknown users so timing tells nothing. */
export const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${"A".repeat(22)}$${"A".repeat(43)}`;

export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 1024;

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if ([...password].length < MIN_PASSWORD) return `a password needs at least ${MIN_PASSWORD} characters`;
  if (password.length > MAX_PASSWORD) return `a password holds at most ${MAX_PASSWORD} characters`;
  return undefined;
}

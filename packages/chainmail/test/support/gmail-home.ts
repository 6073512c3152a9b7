// A chainmail home with one Google account on the Gmail test server (src/testing/gmail.ts) as user
// gina: the set-up the Google tests share. Pass the SMTP port for tests that send.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Home, resolveHome } from "../../src/home.js";
import { setSecret } from "../../src/secrets.js";

export const GMAIL_USER = "gina";
export const GMAIL_PASSWORD = "gina-pw";

export function gmailHome(prefix: string, imapPort: number, smtpPort?: number): { dir: string; home: Home } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  const smtp =
    smtpPort === undefined ? "" : `[accounts.smtp]\nhost = "127.0.0.1"\nport = ${smtpPort}\ntls = "none"\n`;
  fs.writeFileSync(
    home.configFile,
    `[cache]
background = false

[[accounts]]
name = "gmail"
provider = "google"
address = "gina@example.com"
username = "${GMAIL_USER}"
[accounts.imap]
host = "127.0.0.1"
port = ${imapPort}
tls = "none"
${smtp}`,
  );
  setSecret(home.secretsDir, "gmail", GMAIL_PASSWORD);
  return { dir, home };
}

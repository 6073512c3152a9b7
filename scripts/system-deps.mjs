#!/usr/bin/env node
// The Debian packages the test suites start as real servers and browsers: a throwaway Dovecot with
// LMTP (chainmail), Chromium (the docs site, Dexi's pages), notmuch (chainmail's benchmark
// comparison) and PostgreSQL 15 (notes-status's second store, started throwaway by its tests). Run
// before `npm test` (as its pretest) and by .ci/run. As root on Debian it installs what is missing,
// non-interactively and without letting apt start any system service; anywhere else it stops at once
// with one line naming the command to run. Plain Node, no dependencies: it runs before `npm ci` too.
import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";

const NEEDS = [
  { pkg: "dovecot-core", path: "/usr/sbin/dovecot" },
  { pkg: "dovecot-imapd", path: "/usr/lib/dovecot/imap" },
  { pkg: "dovecot-lmtpd", path: "/usr/lib/dovecot/lmtp" },
  { pkg: "chromium", path: "/usr/bin/chromium" },
  { pkg: "notmuch", path: "/usr/bin/notmuch" },
  { pkg: "postgresql-15", path: "/usr/lib/postgresql/15/bin/postgres" },
];

const missing = () => NEEDS.filter((n) => !existsSync(n.path)).map((n) => n.pkg);
const wanted = missing();
if (wanted.length === 0) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const isDebian = existsSync("/etc/debian_version") && existsSync("/usr/bin/apt-get");
const command = `apt-get install -y --no-install-recommends ${wanted.join(" ")}`;
if (!isRoot || !isDebian || process.env.MCPFORGE_NO_INSTALL === "1") {
  process.stderr.write(
    `mcpforge tests need the Debian packages ${wanted.join(", ")}: run \`sudo ${command}\` (with a policy-rc.d that denies service starts), then npm test again.\n`,
  );
  process.exit(1);
}

// Without a policy-rc.d, apt would start a system Dovecot listening on port 143 on every interface
// (and a system PostgreSQL cluster).
const POLICY = "/usr/sbin/policy-rc.d";
const ownPolicy = !existsSync(POLICY);
if (ownPolicy) writeFileSync(POLICY, "#!/bin/sh\nexit 101\n", { mode: 0o755 });
const apt = (args) =>
  execFileSync("apt-get", args, {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
try {
  process.stderr.write(
    `mcpforge: installing ${wanted.join(", ")} for the tests (apt-get, no services started)\n`,
  );
  apt(["update", "-qq"]);
  apt(["install", "-y", "-qq", "--no-install-recommends", ...wanted]);
  // A package whose files were removed by hand counts as installed: reinstall it.
  const still = missing();
  if (still.length > 0) apt(["install", "-y", "-qq", "--no-install-recommends", "--reinstall", ...still]);
} finally {
  if (ownPolicy) rmSync(POLICY, { force: true });
}
const after = missing();
if (after.length > 0) {
  process.stderr.write(`mcpforge: ${after.join(", ")} still missing after apt-get; install them by hand.\n`);
  process.exit(1);
}

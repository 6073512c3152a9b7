/** What the command line says when there is no config.toml yet: where it goes and how to add an account. */
export function noConfigText(configFile: string): string {
  return [
    `No accounts: there is no config file at ${configFile}.`,
    "The quickest way to add an account: `chainmail accounts add you@example.com`, which finds the",
    "server settings for the address and writes the file. Or write it there yourself, for example:",
    "",
    "  [[accounts]]",
    '  name = "work"',
    '  provider = "imap"',
    '  address = "me@example.com"',
    '  username = "me@example.com"',
    "  [accounts.imap]",
    '  host = "imap.example.com"',
    "  port = 993",
    "  [accounts.smtp]",
    '  host = "smtp.example.com"',
    "  port = 465",
    "",
    "then store its password with `chainmail secret set work` (on stdin). A running daemon reads the",
    "file again on its own; start one with `chainmail daemon`. `chainmail accounts` then lists the account,",
    "and `chainmail test work` checks that it can log in.",
  ].join("\n");
}

/**
 * One line under a listing that came back empty because no account is configured (folders, search,
 * cache status, auth status), so an empty answer is not mistaken for an empty mailbox.
 */
export function noAccountsLine(configFile: string): string {
  return `No accounts are configured in ${configFile}: \`chainmail accounts add you@example.com\` adds one (\`chainmail accounts\` says more).`;
}

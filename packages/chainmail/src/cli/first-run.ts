/** What the command line says when there is no config.toml yet: where it goes and how to add an account. */
export function noConfigText(configFile: string): string {
  return [
    `No accounts: there is no config file at ${configFile}.`,
    "To add an account, write it there, for example:",
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

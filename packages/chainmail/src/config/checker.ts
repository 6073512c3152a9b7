/**
 * The validator's tools: each problem is collected with its path (`accounts[1].imap.port`), so one
 * load names them all.
 */

export type Table = Record<string, unknown>;

export class Checker {
  readonly problems: string[] = [];
  str(t: Table, key: string, at: string, required: boolean): string | undefined {
    const v = t[key];
    if (v === undefined) {
      if (required) this.problems.push(`${at}.${key} is required`);
      return undefined;
    }
    if (typeof v !== "string" || v.length === 0) {
      this.problems.push(`${at}.${key} must be a non-empty string`);
      return undefined;
    }
    return v;
  }
  bool(t: Table, key: string, at: string): boolean {
    const v = t[key];
    if (v === undefined) return false;
    if (typeof v !== "boolean") {
      this.problems.push(`${at}.${key} must be true or false`);
      return false;
    }
    return v;
  }
  unknown(t: Table, allowed: string[], at: string): void {
    for (const k of Object.keys(t))
      if (!allowed.includes(k)) this.problems.push(`${at}.${k} is not a known setting`);
  }
}

export function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * A message's Date header as a time, from what ENVELOPE (imapflow) or mailparser made of it: null
 * where a sender wrote no date a clock can hold ("not a date", a year past 275,760). Every reading
 * of a header date goes through here: `new Date(x).toISOString()` throws RangeError on such a
 * date, and one message carrying it failed every server search of its folder (INTERNAL).
 */
export function headerTime(d: Date | string | number | null | undefined): number | null {
  if (d === null || d === undefined || d === "") return null;
  // (a Date made of a number clips it as a Date holds times: whole ms, none past ±8.64e15)
  const t = (d instanceof Date ? d : new Date(typeof d === "number" ? d : Date.parse(d))).getTime();
  return Number.isFinite(t) ? t : null;
}

/** `headerTime` as an RFC 3339 UTC string. */
export function headerIso(d: Date | string | number | null | undefined): string | null {
  const t = headerTime(d);
  return t === null ? null : new Date(t).toISOString();
}

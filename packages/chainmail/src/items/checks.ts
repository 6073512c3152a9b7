/** Field checks beyond the parameter schemas' bounds: dates, the description's size, evidence. */
import { MailError } from "../errors.js";
import { DATE_PATTERN, MAX_ITEM_DESCRIPTION_BYTES } from "./model.js";

export const invalid = (message: string) => new MailError("INVALID_ARGUMENT", message);
export const conflict = (message: string, hint?: string) => new MailError("CONFLICT", message, hint);
export const notFound = (id: string) =>
  new MailError("NOT_FOUND", `no work item ${JSON.stringify(id)}`, "list_items gives the item IDs.");

/** A real calendar day written YYYY-MM-DD. */
export function checkDate(name: string, value: string | undefined): void {
  if (value === undefined) return;
  if (!DATE_PATTERN.test(value)) throw invalid(`${name} must be a date written YYYY-MM-DD`);
  // A month 13 gives an Invalid Date (toISOString would throw a RangeError); a February 30 rolls
  // over to March, so the day must also come back unchanged.
  const day = new Date(`${value}T00:00:00Z`);
  const ok = !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
  if (!ok) throw invalid(`${name} ${value} is not a day of the calendar`);
}

export function checkDescription(value: string | undefined): void {
  if (value !== undefined && Buffer.byteLength(value, "utf8") > MAX_ITEM_DESCRIPTION_BYTES)
    throw invalid(`description must be at most ${MAX_ITEM_DESCRIPTION_BYTES} bytes (64 KiB) of UTF-8`);
}

export function checkEstimate(value: number | undefined): void {
  if (value !== undefined && (!Number.isFinite(value) || value < 0))
    throw invalid("estimate must be a non-negative number");
}

export function checkTitle(value: string | undefined): void {
  if (value !== undefined && value.trim() === "") throw invalid("title must not be blank");
}

export function checkDateOrder(start: string | null, due: string | null): void {
  if (start !== null && due !== null && start > due)
    throw invalid(`start_date ${start} is after due_date ${due}`);
}

export function checkCriterionText(name: string, text: string): void {
  if (text.trim() === "") throw invalid(`${name} must not be blank`);
}

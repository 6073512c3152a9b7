// Message row ids that follow arrival time. The FTS index's rowids are message ids, so with ids in
// arrival order the index is itself newest-first: a text query's page is FTS5's own
// `ORDER BY rowid DESC LIMIT n`, which stops after n hits, where a walk of the date index had to
// test its rows against every hit (8,442 for `{invoice budget} -report` at 100,000 messages).
//
// id = (second + 2^32) * 2^19 + tie. The arrival second (IMAP's INTERNALDATE has whole seconds, so
// internal_date is stored as whole seconds too) is offset so ids stay non-negative, and a second
// holds 524,288 messages in the order they were stored. Ids stay below 2^52: exact as JavaScript
// numbers. Ordering by id is then ordering by (internal_date, id); triggers (ARRIVAL_ORDER_SQL)
// refuse any row that would break it.
import { type CacheDb, stmt } from "./schema.js";

const TIE_BITS = 19;
const TIES = 2 ** TIE_BITS;
const OFFSET = 2 ** 32;
const MIN_SECOND = -OFFSET;
const MAX_SECOND = OFFSET - 1;

/** The arrival second a time in ms is stored as (dates before 1834 or after 2106 are clamped). */
export const arrivalSecond = (ms: number) =>
  Math.min(MAX_SECOND, Math.max(MIN_SECOND, Math.floor(Number.isFinite(ms) ? ms / 1000 : 0)));

/** The first id of an arrival second; its ties follow it. */
export const firstIdOf = (second: number) => (second + OFFSET) * TIES;

/**
 * SQL for the internal_date of the message whose id is the column `id`: the arrival second is the
 * id's high bits (the triggers below hold every row to it), so an index keyed by (internal_date,
 * id) can be probed for a row by its id alone.
 */
export const internalDateOfSql = (id: string) => `((${id} >> ${TIE_BITS}) - ${OFFSET}) * 1000`;

/** The lowest id a message that arrived at or after `ms` can have: a date bound as an id bound. */
export const idFloorOf = (ms: number) => firstIdOf(arrivalSecond(Math.ceil(ms / 1000) * 1000));

/**
 * `idFloorOf(ms)` where `internal_date >= ms` is exactly `id >= idFloorOf(ms)` (and `<` its
 * negation): ms's second within the ids' range, where no clamping comes in. Else null.
 */
export function exactIdFloor(ms: number): number | null {
  const second = Math.ceil(ms / 1000);
  return Number.isFinite(second) && second >= MIN_SECOND && second <= MAX_SECOND ? firstIdOf(second) : null;
}

export interface ArrivalSlot {
  id: number;
  /** What to store as internal_date: whole seconds, a second later when that second is full. */
  internalDate: number;
}

/**
 * The id for a new message that arrived at `ms`: after the last one stored for that second. When
 * 524,288 messages already arrived in that second the message is stored a second later (the
 * order stays right; its received time is a second off).
 */
export function newMessageSlot(db: CacheDb, ms: number): ArrivalSlot {
  for (let second = arrivalSecond(ms); second <= MAX_SECOND; second++) {
    const lo = firstIdOf(second);
    const last = (
      stmt(db, "SELECT max(id) AS id FROM messages WHERE id BETWEEN ? AND ?").get(lo, lo + TIES - 1) as {
        id: number | null;
      }
    ).id;
    if (last === null) return { id: lo, internalDate: second * 1000 };
    if (last < lo + TIES - 1) return { id: last + 1, internalDate: second * 1000 };
  }
  throw new Error("No message id is left after this arrival time");
}

/**
 * Ids for rows in ascending (internal_date, id) order, in one pass: what the migration gives the
 * messages cached before ids followed arrival time.
 */
export function slotsInOrder(): (ms: number) => ArrivalSlot {
  let second = Number.NEGATIVE_INFINITY;
  let tie = 0;
  return (ms) => {
    const s = arrivalSecond(ms);
    if (s > second) {
      second = s;
      tie = 0;
    } else if (++tie === TIES) {
      second++;
      tie = 0;
    }
    return { id: firstIdOf(second) + tie, internalDate: second * 1000 };
  };
}

const BREAKS_ORDER = (row: "new") =>
  `${row}.id IS NULL OR ${row}.internal_date % 1000 != 0 OR (${row}.id >> ${TIE_BITS}) != ${row}.internal_date / 1000 + ${OFFSET}`;

/** Triggers that refuse a message row whose id does not follow its arrival time. */
export const ARRIVAL_ORDER_SQL = `
  CREATE TRIGGER messages_arrival_ins BEFORE INSERT ON messages WHEN ${BREAKS_ORDER("new")} BEGIN
    SELECT RAISE(ABORT, 'messages.id must follow internal_date (src/cache/arrival-id.ts)');
  END;
  CREATE TRIGGER messages_arrival_upd BEFORE UPDATE OF id, internal_date ON messages WHEN ${BREAKS_ORDER("new")} BEGIN
    SELECT RAISE(ABORT, 'messages.id must follow internal_date (src/cache/arrival-id.ts)');
  END;`;

/**
 * The folders a watch without NOTIFY checks: those the cache answered a read of lately
 * (noteCacheRead, called on the cache path of search and get_message), newest read first, per
 * account, bounded in number and in age.
 */
import { describe, expect, it } from "vitest";
import { noteCacheRead, recentReads } from "../src/cache/watch.js";

describe("recentReads", () => {
  it("lists an account's folders by their last read, newest first, without the other accounts'", () => {
    noteCacheRead("r1", "A", 1000);
    noteCacheRead("r1", "B", 1001);
    noteCacheRead("r2", "A", 1002);
    noteCacheRead("r1", "A", 1003);
    expect(recentReads("r1", 0, 10)).toEqual(["A", "B"]);
    expect(recentReads("r2", 0, 10)).toEqual(["A"]);
  });

  it("keeps at most `max`, the newest reads", () => {
    for (let i = 0; i < 30; i++) noteCacheRead("r3", `F${i}`, 2000 + i);
    expect(recentReads("r3", 0, 3)).toEqual(["F29", "F28", "F27"]);
  });

  it("forgets reads older than the window", () => {
    noteCacheRead("r4", "Old", 5000);
    noteCacheRead("r4", "New", 9000);
    expect(recentReads("r4", 8000, 10)).toEqual(["New"]);
    // Forgotten for good: a wider window does not bring it back
    expect(recentReads("r4", 0, 10)).toEqual(["New"]);
  });
});

/**
 * CJK index benchmark (`npm run bench:cjk`; not run by CI): builds the cache's FTS table from a
 * synthetic corpus of N messages (default 100,000; BENCH_MESSAGES=20000 for a run of about a minute)
 * of which a share (BENCH_CJK_SHARE, default 0.2) is Chinese or Japanese, once per way of indexing
 * CJK text, and prints each one's index size, build time and query p50/p95 (count of matches plus
 * the newest page of 25, as searchCache reads a text term):
 *   - words:    today's index alone (porter unicode61): a CJK run is one token (the baseline; CJK
 *               words inside a run are not found at all)
 *   - unigram:  the same index with each CJK character its own token and a CJK term searched as the
 *               phrase of its characters (src/query/cjk.ts: what the cache does)
 *   - trigram:  the word index plus a trigram index beside it (tokenize='trigram'), CJK terms of 3
 *               or more characters searched there; 1-2 character terms cannot be (n/a)
 *   - segmenter: CJK runs split into words by Intl.Segmenter (dictionary-based) at index and query time
 * Run from packages/chainmail:
 *   npx esbuild src/bench/cjk-bench.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=dist/bench/cjk-bench.js && node dist/bench/cjk-bench.js
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { cjkSpaced, hasCjk } from "../query/cjk.js";
import { ftsString } from "../query/sql.js";

const N = Number(process.env.BENCH_MESSAGES ?? 100_000);
const CJK_SHARE = Number(process.env.BENCH_CJK_SHARE ?? 0.2);
const RUNS = Number(process.env.BENCH_RUNS ?? 100);

let seed = 7;
const rnd = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(a: readonly T[]): T => a[Math.floor(a.length * rnd() ** 1.5)] as T;

// Vocabularies: common words first (picked more often); the query words among them
const LATIN = (
  "the meeting report invoice project budget deadline please find attached review schedule " +
  "team update customer order delivery quarter plan call notes draft contract price offer thanks " +
  "regards question answer week month today tomorrow office travel hotel flight ticket payment"
).split(" ");
const ZH = (
  "我们 会议 项目 预算 报告 请 明天 下午 参加 客户 合同 进度 问题 时间 安排 通知 附件 确认 " +
  "季度 计划 部门 经理 同事 邮件 回复 审核 发票 付款 出差 酒店 机票 培训 总结 目标 数据 分析"
).split(" ");
const JA = (
  "会議 定例 資料 確認 お願い します です よろしく 明日 来週 プロジェクト 進捗 予算 報告 " +
  "ご連絡 お客様 契約 請求書 日程 調整 打ち合わせ 担当 共有 添付 対応 検討 予定 出張 今月"
).split(" ");
const JA_PARTICLES = ["の", "を", "に", "は", "が", "で", "と", "も"];

function latinText(words: number): string {
  return Array.from({ length: words }, () => pick(LATIN)).join(" ");
}
/** Chinese sentences: words run together, a full stop now and then (no spaces, as written). */
function zhText(words: number): string {
  let s = "";
  for (let i = 0; i < words; i++) s += pick(ZH) + (rnd() < 0.12 ? "。" : rnd() < 0.1 ? "，" : "");
  return s;
}
/** Japanese: words joined by particles, no spaces. */
function jaText(words: number): string {
  let s = "";
  for (let i = 0; i < words; i++)
    s += pick(JA) + (rnd() < 0.5 ? pick(JA_PARTICLES) : rnd() < 0.1 ? "。" : "");
  return s;
}

interface Msg {
  subject: string;
  from: string;
  body: string;
}
function corpus(): Msg[] {
  const out: Msg[] = [];
  for (let i = 0; i < N; i++) {
    const r = rnd();
    if (r < CJK_SHARE / 2)
      out.push({
        subject: zhText(4),
        from: `王伟 wang${i % 300}@example.cn`,
        body: zhText(120) + latinText(8),
      });
    else if (r < CJK_SHARE)
      out.push({
        subject: jaText(4),
        from: `田中 tanaka${i % 300}@example.jp`,
        body: jaText(110) + latinText(8),
      });
    else out.push({ subject: latinText(6), from: `Ann ann${i % 300}@example.com`, body: latinText(150) });
  }
  return out;
}

const SEGMENTER = new Intl.Segmenter("ja", { granularity: "word" });
const CJK_RUN =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3005\u3006\u30fc\uff70]+/gu;
/** CJK runs split into Intl.Segmenter's words, each set apart by spaces. */
const segmented = (t: string) =>
  hasCjk(t)
    ? t.replace(CJK_RUN, (run) => ` ${[...SEGMENTER.segment(run)].map((s) => s.segment).join(" ")} `)
    : t;

interface Option {
  name: string;
  ddl: string[];
  index: (db: Database.Database, id: number, m: Msg) => void;
  /** The statements for one query, or null when this option cannot answer the term. */
  query: (term: string) => { table: string; expr: string } | null;
}
const WORDS_DDL = `CREATE VIRTUAL TABLE messages_fts USING fts5(subject, from_addr, body,
  content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`;
const insertWith = (table: string) => (db: Database.Database, id: number, f: (s: string) => string, m: Msg) =>
  db
    .prepare(`INSERT INTO ${table} (rowid, subject, from_addr, body) VALUES (?, ?, ?, ?)`)
    .run(id, f(m.subject), f(m.from), f(m.body));
const asIs = (s: string) => s;
const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

const OPTIONS: Option[] = [
  {
    name: "words",
    ddl: [WORDS_DDL],
    index: (db, id, m) => insertWith("messages_fts")(db, id, asIs, m),
    query: (t) => ({ table: "messages_fts", expr: quoted(t) }),
  },
  {
    name: "unigram",
    ddl: [WORDS_DDL],
    index: (db, id, m) => insertWith("messages_fts")(db, id, cjkSpaced, m),
    query: (t) => ({ table: "messages_fts", expr: ftsString(t) }),
  },
  {
    name: "trigram",
    ddl: [
      WORDS_DDL,
      `CREATE VIRTUAL TABLE messages_tri USING fts5(subject, from_addr, body,
        content='', contentless_delete=1, tokenize='trigram remove_diacritics 1')`,
    ],
    index: (db, id, m) => {
      insertWith("messages_fts")(db, id, asIs, m);
      // Only messages with CJK text need the trigram row (Latin terms use the word index)
      if (hasCjk(m.subject + m.from + m.body)) insertWith("messages_tri")(db, id, asIs, m);
    },
    query: (t) =>
      !hasCjk(t)
        ? { table: "messages_fts", expr: quoted(t) }
        : [...t].length >= 3
          ? { table: "messages_tri", expr: quoted(t) }
          : null,
  },
  {
    name: "segmenter",
    ddl: [WORDS_DDL],
    index: (db, id, m) => insertWith("messages_fts")(db, id, segmented, m),
    query: (t) => ({ table: "messages_fts", expr: quoted(segmented(t).trim()) }),
  },
];

const QUERIES = ["会議", "定例会議", "会", "预算", "项目进度", "budget", "meeting report"];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

const msgs = corpus();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-cjk-bench-"));
console.log(
  `cjk-bench: ${N} messages, ${Math.round(CJK_SHARE * 100)}% Chinese or Japanese, ${RUNS} runs per query, load ${os.loadavg()[0]?.toFixed(1)}`,
);
try {
  for (const o of OPTIONS) {
    const file = path.join(dir, `${o.name}.db`);
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    for (const d of o.ddl) db.exec(d);
    const t0 = performance.now();
    const step = 2000;
    for (let i = 0; i < msgs.length; i += step)
      db.transaction(() => {
        for (let j = i; j < Math.min(i + step, msgs.length); j++) o.index(db, j + 1, msgs[j] as Msg);
      })();
    for (const t of ["messages_fts", "messages_tri"])
      if (o.ddl.some((d) => d.includes(t))) db.exec(`INSERT INTO ${t} (${t}) VALUES ('optimize')`);
    const buildMs = performance.now() - t0;
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.exec("VACUUM");
    const mb = fs.statSync(file).size / 1024 ** 2;
    const cells: string[] = [];
    for (const q of QUERIES) {
      const plan = o.query(q);
      if (!plan) {
        cells.push(`${q} n/a`);
        continue;
      }
      const count = db.prepare(`SELECT count(*) FROM ${plan.table} WHERE ${plan.table} MATCH ?`).pluck();
      const page = db
        .prepare(`SELECT rowid FROM ${plan.table} WHERE ${plan.table} MATCH ? ORDER BY rowid DESC LIMIT 25`)
        .pluck();
      const times: number[] = [];
      let n = 0;
      for (let r = 0; r < RUNS; r++) {
        const s = performance.now();
        n = count.get(plan.expr) as number;
        page.all(plan.expr);
        times.push(performance.now() - s);
      }
      cells.push(`${q} ${n} hits ${pct(times, 50).toFixed(2)}/${pct(times, 95).toFixed(2)} ms`);
    }
    console.log(
      `${o.name.padEnd(9)} size ${mb.toFixed(1)} MB, build ${(buildMs / 1000).toFixed(1)} s | ${cells.join(" | ")}`,
    );
    db.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

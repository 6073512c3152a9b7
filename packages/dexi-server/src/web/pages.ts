/**
 * The HTML of the sign-in, consent and connected-apps pages: plain forms, no script, one local
 * stylesheet. Every value shown is escaped here, whatever its source.
 */
import type { GrantRow } from "../store/index.js";

export function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

export const STYLESHEET = `body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}label{display:block;margin:.3rem 0}
input[type=text],input[type=password],select{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}
button{font:inherit;padding:.4rem 1rem;margin:.3rem .5rem .3rem 0}.error{color:#a00;font-weight:600}
.muted{color:#555}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
code{background:#f3f3f3;padding:0 .2rem}`;

const SCOPE_TEXT: Record<string, string> = {
  "notes:read": "Read your notes (search, list, open, review queue)",
  "notes:write": "Change your notes (create, edit, delete, grade reviews)",
};

export function layout(title: string, body: string, signedInAs?: string, csrf?: string): string {
  const who =
    signedInAs && csrf
      ? `<form method="post" action="/signout" class="muted">Signed in as <b>${esc(signedInAs)}</b>
  <input type="hidden" name="csrf" value="${esc(csrf)}"> <button type="submit">Sign out</button>
  <a href="/apps">Connected apps</a></form>`
      : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Dexi</title><link rel="stylesheet" href="/assets/dexi.css"></head>
<body>${who}<h1>${esc(title)}</h1>
${body}
</body></html>`;
}

export function signInPage(o: {
  csrf: string;
  next: string;
  name?: string;
  error?: string;
  note?: string;
}): string {
  return layout(
    "Sign in to Dexi",
    `${o.note ? `<p>${esc(o.note)}</p>` : ""}${o.error ? `<p class="error" role="alert">${esc(o.error)}</p>` : ""}
<form method="post" action="/signin">
  <input type="hidden" name="csrf" value="${esc(o.csrf)}">
  <input type="hidden" name="next" value="${esc(o.next)}">
  <label>User name <input type="text" name="name" autocomplete="username" required value="${esc(o.name ?? "")}"></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>`,
  );
}

interface Choices {
  folders: string[];
  tags: string[];
}

function pickers(c: Choices, label: string): string {
  const opts = (xs: string[]) => xs.map((x) => `<option value="${esc(x)}">${esc(x)}</option>`).join("");
  return `<fieldset><legend>${esc(label)}</legend>
  <label>Folder <select name="folder"><option value="">Any folder</option>${opts(c.folders)}</select></label>
  <label>Tag <select name="tag"><option value="">Any tag</option>${opts(c.tags)}</select></label>
</fieldset>`;
}

export function consentPage(o: {
  user: string;
  csrf: string;
  rid: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
  choices: Choices;
  error?: string;
}): string {
  const boxes = o.scopes
    .map(
      (s) =>
        `<label><input type="checkbox" name="scope" value="${esc(s)}" checked> <code>${esc(s)}</code> ${esc(SCOPE_TEXT[s] ?? s)}</label>`,
    )
    .join("\n  ");
  return layout(
    "Connect an app to your notes",
    `${o.error ? `<p class="error" role="alert">${esc(o.error)}</p>` : ""}
<p><b>${esc(o.clientName)}</b> wants to use your Dexi notes. After you decide, you go back to
<b>${esc(o.redirectHost)}</b>.</p>
<form method="post" action="/authorize/consent">
  <input type="hidden" name="csrf" value="${esc(o.csrf)}">
  <input type="hidden" name="rid" value="${esc(o.rid)}">
  <fieldset><legend>It may</legend>
  ${boxes}
  </fieldset>
  ${pickers(o.choices, "Only notes in (optional)")}
  <p class="muted">With a folder or tag, the app sees only your own notes inside it, and what it writes
  lands there. You can narrow or revoke this later under Connected apps.</p>
  <button type="submit" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    o.user,
    o.csrf,
  );
}

const when = (ms: number | null) =>
  ms === null ? "never" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function grantRow(g: GrantRow, csrf: string, choices: Choices): string {
  const restriction =
    [g.folder ? `folder ${esc(g.folder)}` : "", g.tag ? `tag ${esc(g.tag)}` : ""]
      .filter(Boolean)
      .join(", ") || "all notes";
  const keep = g.scopes
    .map(
      (s) =>
        `<label><input type="checkbox" name="scope" value="${esc(s)}" checked> keep <code>${esc(s)}</code></label>`,
    )
    .join("");
  const narrow = {
    folders: g.folder ? [] : choices.folders,
    tags: g.tag ? [] : choices.tags,
  };
  return `<tr><td><b>${esc(g.clientName)}</b><br><span class="muted">${esc(hostOf(g.redirectUri))}</span></td>
<td>${g.scopes.map((s) => `<code>${esc(s)}</code>`).join(" ")}</td><td>${restriction}</td>
<td>${when(g.createdMs)}</td><td>${when(g.lastUsedMs)}</td>
<td><form method="post" action="/apps/restrict"><input type="hidden" name="csrf" value="${esc(csrf)}">
<input type="hidden" name="grant" value="${g.id}">${keep}
${g.folder ? "" : `<label>Only folder <select name="folder"><option value="">(unchanged)</option>${narrow.folders.map((f) => `<option value="${esc(f)}">${esc(f)}</option>`).join("")}</select></label>`}
${g.tag ? "" : `<label>Only tag <select name="tag"><option value="">(unchanged)</option>${narrow.tags.map((t) => `<option value="${esc(t)}">${esc(t)}</option>`).join("")}</select></label>`}
<button type="submit">Restrict</button></form>
<form method="post" action="/apps/revoke"><input type="hidden" name="csrf" value="${esc(csrf)}">
<input type="hidden" name="grant" value="${g.id}"><button type="submit">Revoke</button></form></td></tr>`;
}

export function appsPage(o: {
  user: string;
  csrf: string;
  grants: GrantRow[];
  choices: Choices;
  error?: string;
}): string {
  const body = o.grants.length
    ? `<table><thead><tr><th>App</th><th>May</th><th>Notes</th><th>Connected</th><th>Last used</th><th></th></tr></thead>
<tbody>${o.grants.map((g) => grantRow(g, o.csrf, o.choices)).join("\n")}</tbody></table>`
    : "<p>No app is connected to your notes.</p>";
  return layout(
    "Connected apps",
    `${o.error ? `<p class="error" role="alert">${esc(o.error)}</p>` : ""}${body}`,
    o.user,
    o.csrf,
  );
}

export function messagePage(title: string, text: string): string {
  return layout(title, `<p>${esc(text)}</p>`);
}

export function hostOf(uri: string): string {
  try {
    const u = new URL(uri);
    return u.host || `${u.protocol}//`;
  } catch {
    return uri;
  }
}

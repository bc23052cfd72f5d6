// Loads every page of the built srl book in headless chromium (Debian's, /usr/bin/chromium)
// served on 127.0.0.1, and fails on a broken link (a missing file or a missing #anchor of a
// book page), a missing image, a failed request or a console error. The API docs under
// api/ are checked at their front pages (api/CRATE/index.html) and as link targets.
// Saves a full-page PNG of each paper chapter (papers/*.html) in the screenshot directory.
//
// Usage: node check.mjs BOOK_DIR SCREENSHOT_DIR
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium } from "playwright-core";

const bookDir = path.resolve(process.argv[2] ?? "target/book");
const shotDir = path.resolve(process.argv[3] ?? "target/book-screenshots");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";

const types = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css",
  ".js": "text/javascript",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".ico": "image/x-icon",
  ".csv": "text/csv",
  ".md": "text/markdown",
  ".txt": "text/plain",
};

/// The file a URL path names (a directory means its index.html), or null.
function fileFor(urlPath) {
  let p;
  try {
    p = decodeURIComponent(urlPath.split("?")[0].split("#")[0]);
  } catch {
    return null;
  }
  const full = path.join(bookDir, p);
  if (!full.startsWith(bookDir)) return null;
  try {
    const st = fs.statSync(full);
    if (st.isDirectory()) {
      const idx = path.join(full, "index.html");
      return fs.existsSync(idx) ? idx : null;
    }
    return full;
  } catch {
    return null;
  }
}

const server = http.createServer((req, res) => {
  const urlPath = new URL(req.url, "http://127.0.0.1").pathname;
  const f = fileFor(urlPath);
  if (!f && urlPath === "/favicon.ico") {
    // Chromium asks every document (also toc.html, which names no icon) for /favicon.ico.
    res.writeHead(204);
    res.end();
    return;
  }
  if (!f) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
    return;
  }
  res.writeHead(200, {
    "content-type": types[path.extname(f)] ?? "application/octet-stream",
  });
  fs.createReadStream(f).pipe(res);
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const origin = `http://127.0.0.1:${server.address().port}`;

function walk(dir, rel = "") {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      if (r === "api") continue;
      out.push(...walk(path.join(dir, e.name), r));
    } else if (e.name.endsWith(".html")) {
      out.push(r);
    }
  }
  return out;
}

const pages = walk(bookDir).sort();
const apiDir = path.join(bookDir, "api");
const apiFronts = fs.existsSync(apiDir)
  ? fs
      .readdirSync(apiDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(apiDir, e.name, "index.html")))
      .map((e) => `api/${e.name}/index.html`)
      .sort()
  : [];
if (pages.length === 0) {
  console.error(`book-check: no pages under ${bookDir}; run \`cargo xtask book\` first`);
  process.exit(1);
}
if (!fs.existsSync(path.join(bookDir, "api", "index.html"))) {
  console.error(`book-check: no API landing page api/index.html under ${bookDir}`);
  process.exit(1);
}
if (apiFronts.length === 0) {
  console.error(`book-check: no API docs under ${apiDir}`);
  process.exit(1);
}

fs.mkdirSync(shotDir, { recursive: true });
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });

const problems = [];
const ids = new Map(); // book page path -> Set of element ids
const links = []; // { from, url }
const shots = [];
let external = 0;

for (const rel of [...pages, ...apiFronts]) {
  const page = await context.newPage();
  const url = `${origin}/${rel}`;
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`${rel}: console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`${rel}: page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    if (r.url().startsWith(origin))
      problems.push(`${rel}: request failed: ${r.url()} (${r.failure()?.errorText})`);
  });
  page.on("response", (r) => {
    if (r.url().startsWith(origin) && r.status() >= 400)
      problems.push(`${rel}: HTTP ${r.status()} for ${r.url().slice(origin.length)}`);
  });
  const resp = await page.goto(url, { waitUntil: "load", timeout: 60000 });
  if (!resp || resp.status() !== 200) problems.push(`${rel}: HTTP ${resp?.status()}`);
  await page.waitForLoadState("networkidle", { timeout: 30000 }).catch(() => {});
  const info = await page.evaluate(() => ({
    images: [...document.images].map((i) => ({
      src: i.currentSrc || i.src,
      ok: i.complete && i.naturalWidth > 0,
    })),
    links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
    ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
    // Tables wider than their box must scroll (overflow-x auto/scroll on the table or an
    // ancestor inside the content), never be clipped at the page edge.
    clipped: [...document.querySelectorAll(".content table")]
      .filter((t) => {
        if (t.scrollWidth <= t.clientWidth + 1 && t.getBoundingClientRect().right <= window.innerWidth) return false;
        for (let e = t; e && e !== document.body; e = e.parentElement) {
          const o = getComputedStyle(e).overflowX;
          if (o === "auto" || o === "scroll") return false;
        }
        return true;
      })
      .map((t) => (t.querySelector("th")?.textContent ?? "").trim().slice(0, 40)),
  }));
  for (const c of info.clipped) problems.push(`${rel}: table "${c}" is wider than the page without a scroll container`);
  for (const img of info.images) {
    if (!img.ok) problems.push(`${rel}: image did not load: ${img.src}`);
  }
  if (!rel.startsWith("api/")) {
    ids.set(rel, new Set(info.ids));
    for (const l of info.links) links.push({ from: rel, url: l });
  } else {
    // From the API front pages, check only the links that leave the API docs (into the book).
    for (const l of info.links)
      if (l.startsWith(origin) && !new URL(l).pathname.startsWith("/api/"))
        links.push({ from: rel, url: l });
  }
  if (/^papers\/(?!index\.html$)[^/]+\.html$/.test(rel)) {
    const shot = path.join(shotDir, rel.replace(/^papers\//, "").replace(/\.html$/, ".png"));
    await page.screenshot({ path: shot, fullPage: true });
    shots.push(shot);
  }
  await page.close();
}

const checked = new Set();
for (const { from, url } of links) {
  if (!url.startsWith(origin)) {
    if (/^https?:/.test(url)) external += 1;
    continue;
  }
  const u = new URL(url);
  const key = `${u.pathname}#${u.hash}`;
  if (checked.has(`${from}|${key}`)) continue;
  checked.add(`${from}|${key}`);
  const f = fileFor(u.pathname);
  if (!f) {
    problems.push(`${from}: broken link ${u.pathname}${u.hash}`);
    continue;
  }
  // 404.html sets <base href="/"> (mdBook's site-url), so its own heading anchor resolves
  // against index.html; it is served for missing pages only and never linked to.
  if (u.hash.length > 1 && from !== "404.html") {
    const target = path.relative(bookDir, f).split(path.sep).join("/");
    const known = ids.get(target);
    const id = decodeURIComponent(u.hash.slice(1));
    if (known && !known.has(id)) problems.push(`${from}: missing anchor ${target}${u.hash}`);
  }
}

await browser.close();
server.close();

console.log(
  `book-check: ${pages.length} book pages and ${apiFronts.length} API front pages loaded, ` +
    `${checked.size} internal links checked, ${external} external links not followed`,
);
for (const s of shots) console.log(`book-check: screenshot ${path.relative(process.cwd(), s)}`);
if (problems.length > 0) {
  const unique = [...new Set(problems)];
  console.error(`book-check: ${unique.length} problem(s):`);
  for (const p of unique) console.error(`  ${p}`);
  process.exit(1);
}
console.log("book-check: no broken link, missing image or console error");

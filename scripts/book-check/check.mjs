// Loads every page of the built srl book in headless chromium (Debian's, /usr/bin/chromium)
// served on 127.0.0.1, and fails on a broken link (a missing file or a missing #anchor of a
// book page), a missing image, a failed request or a console error. The API docs under
// api/ are checked at their front pages (api/CRATE/index.html) and as link targets.
// Saves a full-page PNG of each paper chapter (papers/*.html) in the screenshot directory.
// Also fails when a paper chapter lacks its `cargo xtask reproduce NAME` command (every
// experiment under results/ must be reproduced by some chapter, and a chapter must name
// each experiment whose results it shows), and when an embedded SVG figure has data series
// that are all constant (a flat, broken plot).
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

/// The y coordinates of each data series of an SVG figure: the `stroke-width="2"`
/// polylines plotters draws (as xtask's `no_published_figure_is_flat` test reads them), and
/// unfilled `stroke-width="2"` paths made only of absolute M/L commands.
function seriesYs(svg) {
  const out = [];
  const attr = (tag, name) => {
    const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`));
    return m ? m[1] : null;
  };
  for (const m of svg.matchAll(/<polyline\b[^>]*>/g)) {
    if (attr(m[0], "stroke-width") !== "2") continue;
    const pts = attr(m[0], "points");
    if (pts === null) continue;
    out.push(
      pts
        .trim()
        .split(/\s+/)
        .map((p) => p.split(",")[1])
        .filter((y) => y !== undefined),
    );
  }
  for (const m of svg.matchAll(/<path\b[^>]*>/g)) {
    if (attr(m[0], "stroke-width") !== "2" || attr(m[0], "fill") !== "none") continue;
    const d = attr(m[0], "d");
    if (d === null || /[^MLml0-9.,\s+eE-]/.test(d) || /[ml]/.test(d)) continue;
    const nums = d.match(/-?[0-9.]+(?:[eE][-+]?[0-9]+)?/g) ?? [];
    const ys = [];
    for (let i = 1; i < nums.length; i += 2) ys.push(nums[i]);
    out.push(ys);
  }
  return out;
}

/// Whether every data series of an SVG is constant. Legend swatches (2 points) are not
/// series; a figure without series (a scatter plot of markers) is not flat.
function isFlat(svg) {
  const lines = seriesYs(svg).filter((ys) => ys.length > 2);
  if (lines.length === 0) return false;
  return lines.every((ys) => ys.every((y) => Number(y) === Number(ys[0])));
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
// The Python API reference generated by pdoc from the docstrings (issue 31).
{
  const py = path.join(bookDir, "python", "srl.html");
  if (!fs.existsSync(py) || !fs.readFileSync(py, "utf8").includes("CostSensitiveClassifier")) {
    console.error(`book-check: no Python API reference python/srl.html (pdoc) under ${bookDir}`);
    process.exit(1);
  }
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
const svgsChecked = new Set(); // figure files already read
const reproduced = new Set(); // experiments some paper chapter shows the command of
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
    text: document.querySelector("main")?.innerText ?? document.body.innerText,
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
    // A figure whose data series are all constant is broken (issue 31).
    if (!img.src.startsWith(origin)) continue;
    const imgPath = new URL(img.src).pathname;
    if (!imgPath.endsWith(".svg")) continue;
    const f = fileFor(imgPath);
    if (!f || svgsChecked.has(f)) continue;
    svgsChecked.add(f);
    if (isFlat(fs.readFileSync(f, "utf8")))
      problems.push(`${rel}: figure ${imgPath} has every data series constant`);
  }
  // Every paper chapter shows the command that reproduces it: at least one
  // `cargo xtask reproduce NAME` of a published experiment, and one for each experiment
  // whose results (figures, results files) it links to.
  if (/^papers\/(?!index\.html$)[^/]+\.html$/.test(rel)) {
    const named = new Set(
      [...info.text.matchAll(/cargo xtask reproduce ([a-z0-9][a-z0-9-]*)/g)].map((m) => m[1]),
    );
    if (named.size === 0) problems.push(`${rel}: no \`cargo xtask reproduce NAME\` command`);
    for (const n of named) {
      if (!fs.existsSync(path.join(bookDir, "results", n, "results.json")))
        problems.push(`${rel}: \`cargo xtask reproduce ${n}\` names no published experiment (results/${n}/results.json)`);
      reproduced.add(n);
    }
    const shown = new Set();
    for (const u of [...info.images.map((i) => i.src), ...info.links]) {
      if (!u.startsWith(origin)) continue;
      const m = new URL(u).pathname.match(/^\/results\/([^/]+)\//);
      if (m) shown.add(m[1]);
    }
    for (const n of shown)
      if (!named.has(n)) problems.push(`${rel}: shows results/${n}/ but not \`cargo xtask reproduce ${n}\``);
  }
  if (rel.startsWith("python/")) {
    // pdoc's generated Python reference: its anchors are link targets; of its own links
    // only those leaving it (into the book) are ours to check (pdoc links the inherited
    // members of private bases to anchors it does not write).
    ids.set(rel, new Set(info.ids));
    for (const l of info.links)
      if (l.startsWith(origin) && !new URL(l).pathname.startsWith("/python/"))
        links.push({ from: rel, url: l });
  } else if (!rel.startsWith("api/")) {
    ids.set(rel, new Set(info.ids));
    for (const l of info.links) links.push({ from: rel, url: l });
  } else {
    // From the API front pages, check only the links that leave the API docs (into the book).
    for (const l of info.links)
      if (l.startsWith(origin) && !new URL(l).pathname.startsWith("/api/"))
        links.push({ from: rel, url: l });
  }
  if (/^papers\/(?!index\.html$)[^/]+\.html$/.test(rel) ||
      ["index.html", "cookbook.html", "python/srl.html"].includes(rel)) {
    const shot = path.join(shotDir, rel.replace(/^papers\//, "").replace(/\//g, "-").replace(/\.html$/, ".png"));
    await page.screenshot({ path: shot, fullPage: true });
    shots.push(shot);
  }
  await page.close();
}

// Every published experiment is reproduced from some paper chapter.
{
  const resultsDir = path.join(bookDir, "results");
  const published = fs.existsSync(resultsDir)
    ? fs
        .readdirSync(resultsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && fs.existsSync(path.join(resultsDir, e.name, "results.json")))
        .map((e) => e.name)
    : [];
  for (const n of published)
    if (!reproduced.has(n))
      problems.push(`papers/: no paper chapter shows \`cargo xtask reproduce ${n}\` (results/${n}/ is published)`);
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
    `${checked.size} internal links checked, ${external} external links not followed, ` +
    `${svgsChecked.size} SVG figures checked for flat series, ${reproduced.size} experiments' reproduce commands found`,
);
for (const s of shots) console.log(`book-check: screenshot ${path.relative(process.cwd(), s)}`);
if (problems.length > 0) {
  const unique = [...new Set(problems)];
  console.error(`book-check: ${unique.length} problem(s):`);
  for (const p of unique) console.error(`  ${p}`);
  process.exit(1);
}
console.log("book-check: no broken link, missing image or console error");

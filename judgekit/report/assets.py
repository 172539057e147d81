"""The report page's style sheet and its one script (the item browser), as text.

Kept in a Python module rather than beside it as ``.css`` / ``.js`` files so they ship in the
wheel with no package-data rule.  The script's sha256 goes into the page's
Content-Security-Policy (:mod:`judgekit.report.render`), so it must be the same bytes on every
page: it reads everything it shows from ``#report-data`` and writes model text with
``textContent`` (or text nodes) only, never ``innerHTML``.

The page's data may hold ``strings``, a table of long texts that occur more than once
(:func:`judgekit.report.render.intern_texts`); a part ``{"ref": i}`` has its text put back from it
before anything is shown. The script, in short: a search box (every word, anywhere in an item's id,
title, tags, flags, labels, verdicts, texts and captions), a select per tag name (a tag's list
value offers, shows as a chip and matches each of its values), a check box per flag (an item with
any checked flag), "N of M items", pages of 25; an item's header opens its blocks. The address
drives it too: ``#item=ID`` opens that item and scrolls it to the top (inside ``<body>``, so that a
headless ``--screenshot`` shows it), ``#q=TEXT`` fills the search, and ``#check`` (for tests) shows
every matching item open on one page, waits for every image, then sets ``data-items``,
``data-images-ok``, ``data-images-broken`` and ``data-ready="1"`` on ``<body>``.  Every
``.scroll`` box (a chart, a table, the leaderboard) whose content is wider than it gets
``data-overflow`` (at load and on resize), which shows its "scroll sideways" hint; ``#layoutcheck``
(for tests) writes ``data-layout`` on ``<body>``: the window's width, the page's, and per box its
caption, whether it overflows and whether its hint shows.
"""

CSS = r"""
:root{--fg:#1d2330;--mut:#5b6475;--bd:#d8dde6;--bg:#fff;--bg2:#f5f7fa;--acc:#0072B2;
--red:#b3261e;--redbg:#fdecea;--amb:#8a5a00;--ambbg:#fff4d6;--gry:#5f6368;--grybg:#eceff1}
*{box-sizing:border-box}
html.pinned{height:100%;overflow:hidden}html.pinned body{height:100%;overflow:auto}
[hidden]{display:none!important}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:var(--fg);background:var(--bg)}
header{padding:18px 28px 10px;border-bottom:1px solid var(--bd);background:var(--bg2)}
h1{margin:0 0 2px;font-size:22px}h2{font-size:18px;margin:26px 0 10px}h3{font-size:15px;margin:18px 0 6px}
h2 small{color:var(--mut);font-weight:normal}
.bench{margin:0;color:var(--mut)}
nav.links{margin:6px 0}nav.links a{color:var(--acc)}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0 4px;font-size:13px}
dl.meta dt{color:var(--mut)}dl.meta dd{margin:0;overflow-wrap:anywhere}
main{padding:0 28px 40px;max-width:1400px}
.note{color:var(--mut);margin:4px 0 8px}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid var(--bd);padding:4px 10px;text-align:left;vertical-align:top}
thead th{background:var(--bg2);font-weight:600}
td.num,td.num b{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.lb th small{display:block;font-weight:normal;color:var(--mut)}
table.lb th{white-space:nowrap}
table.lb td.num b{color:#000}
.ci{color:var(--mut);font-size:12px}
.scrollbox{max-width:100%;min-width:0}
.scroll{overflow-x:auto;max-width:100%;
background:linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) right/24px 100% no-repeat local,
radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.2),rgba(0,0,0,0)) right/10px 100% no-repeat scroll}
.scroll-hint{display:none;margin:2px 0 0;font-size:12px;color:var(--acc);text-align:right}
.scroll[data-overflow]+.scroll-hint{display:block}
.charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
figure.chart{margin:0;padding:10px 12px;border:1px solid var(--bd);border-radius:6px;max-width:100%;min-width:0}
figure.chart figcaption{font-weight:600;margin-bottom:6px;overflow-wrap:anywhere}
h1,h2,h3,.note{overflow-wrap:anywhere}
@media (max-width:640px){header{padding:12px 10px 8px}main{padding:0 10px 30px}figure.chart{padding:8px 6px}
#browser .controls{position:static}}
svg.chart{font:11px system-ui,sans-serif;display:block}
svg.chart .vl{fill:#222;font-size:10px;text-anchor:middle}svg.chart rect.flat{stroke:#222;stroke-width:.6}
svg.chart .grid{stroke:#e3e6ec;stroke-width:1}svg.chart .zero{stroke:#333;stroke-width:1.2}
svg.chart .tick{text-anchor:end;fill:#555}svg.chart .gl,svg.chart .lg,svg.chart .tot{fill:#333}
svg.chart .na{fill:#888;font-style:italic;text-anchor:middle}svg.stacked .na{text-anchor:start}
svg.chart .whisker line{stroke:#222;stroke-width:1.3}
svg.chart .pct{fill:#fff;font-size:10px}svg.chart .pct.dk{fill:#222}
svg.chart rect.bar:hover,svg.chart rect.seg:hover{opacity:.8}
#browser .controls{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;padding:10px 12px;
background:var(--bg2);border:1px solid var(--bd);border-radius:6px;position:sticky;top:0;z-index:2}
#browser input[type=search]{width:320px;max-width:100%;padding:5px 8px;border:1px solid #b9c0cc;border-radius:4px}
#browser select{padding:4px;border:1px solid #b9c0cc;border-radius:4px;max-width:220px}
#browser .flags label{margin-right:10px;white-space:nowrap}
#browser .count{font-weight:600}
.pager{display:flex;gap:8px;align-items:center;margin:8px 0}
button{font:inherit;cursor:pointer;border:1px solid #b9c0cc;background:#fff;border-radius:4px;padding:2px 10px}
button:disabled{opacity:.45;cursor:default}
.item{border:1px solid var(--bd);border-radius:6px;margin:6px 0;background:#fff;scroll-margin-top:70px}
.item>.head{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:baseline;padding:7px 12px;cursor:pointer;
width:100%;text-align:left;border:0;background:none;border-radius:6px}
.item>.head:hover{background:var(--bg2)}
.item.open>.head{border-bottom:1px solid var(--bd);border-radius:6px 6px 0 0;background:var(--bg2)}
.head .tw{color:var(--mut);width:1em}.head .id{font-family:ui-monospace,Menlo,Consolas,monospace;color:var(--mut)}
.head .title{font-weight:600;overflow-wrap:anywhere}
.head .score{margin-left:auto;font-variant-numeric:tabular-nums;font-weight:600}
.chip{font-size:12px;background:#e8f1f8;color:#0b4a75;border-radius:10px;padding:0 8px;overflow-wrap:anywhere}
.badge{font-size:12px;border-radius:4px;padding:0 6px;font-weight:600;background:var(--grybg);color:var(--gry)}
.badge.failed,.badge.st-failed{background:var(--redbg);color:var(--red)}
.badge.reasked,.badge.st-reasked{background:var(--ambbg);color:var(--amb)}
.badge.skipped,.badge.st-skipped{background:var(--grybg);color:var(--gry)}
.item>.body{padding:10px 12px;display:flex;flex-direction:column;gap:8px}
.group{border:1px solid var(--bd);border-radius:6px;padding:8px 10px;display:flex;flex-direction:column;gap:8px;
background:#fbfcfd}
.group>.ghead{font-weight:600;color:var(--mut)}
.block{border-left:4px solid var(--bd);padding:4px 10px 6px;background:#fff;border-radius:0 4px 4px 0}
.block .bhead{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline;margin-bottom:3px;font-size:12.5px}
.block .kind{text-transform:uppercase;letter-spacing:.04em;font-size:11px;color:var(--mut)}
.block .label{font-weight:600}
.block .bmeta{color:var(--mut);font-size:12px}.block a.blink{color:var(--acc);font-size:12px}
.verdict{background:var(--grybg);color:#3c4043;border-radius:4px;padding:0 6px;font-weight:600}
.verdict.tone-good{background:#e6f4ea;color:#0f5b2e}.verdict.tone-bad{background:var(--redbg);color:var(--red)}
nav.toc{margin:8px 0 2px;font-size:13px}nav.toc a{color:var(--acc)}nav.toc small{color:var(--mut)}
th .unit{font-weight:normal;color:var(--mut)}
.kind-question{border-left-color:#56B4E9;background:#f3f9fd}
.kind-answer{border-left-color:#0072B2}
.kind-baseline{border-left-color:#999;background:#fafafa}
.kind-reference{border-left-color:#009E73;background:#f2faf7}
.kind-judgment{border-left-color:#CC79A7;background:#fcf5f9}
.kind-note{border-left-color:#ddd;color:var(--mut);font-size:13px}
.kind-turn{border-left:0;border-radius:10px;padding:5px 10px;max-width:78%}
.kind-turn.role-user{align-self:flex-start;background:#eef3f8}
.kind-turn.role-assistant{align-self:flex-end;background:#e9f6ee}
.kind-turn.role-other{align-self:center;background:#f3f3f3;font-size:12px;max-width:64%}
.block.st-failed{border-left-color:var(--red);background:var(--redbg)}
.block.st-reasked{border-left-color:#e69f00;background:var(--ambbg)}
.block.st-skipped{border-left-color:#9aa0a6;background:var(--grybg);color:var(--gry)}
.text{white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.4}
.text.mono{font-family:ui-monospace,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:13px}
.text.folded{max-height:calc(40 * 1.4em);overflow:auto;position:relative;
-webkit-mask-image:linear-gradient(#000 85%,transparent);mask-image:linear-gradient(#000 85%,transparent)}
button.more{font-size:12px;margin-top:3px}
mark{background:#ffe066;color:inherit;padding:0 1px;border-radius:2px}
figure.img{display:inline-block;margin:4px 8px 4px 0;vertical-align:top;max-width:100%}
figure.img img{display:block;max-width:min(384px,100%);height:auto;border:1px solid var(--bd);background:#fff}
.kind-turn figure.img img{max-width:min(240px,100%)}
figure.img figcaption{font-size:12px;color:var(--mut);max-width:384px;overflow-wrap:anywhere}
.missing{width:220px;height:140px;display:flex;align-items:center;justify-content:center;text-align:center;
padding:10px;background:#e0e0e0;color:#555;font-size:12px;border-radius:4px;overflow-wrap:anywhere}
.empty{color:var(--mut);padding:14px}
"""

SCRIPT = r"""
(function () {
"use strict";
var node = document.getElementById("report-data");
var data = JSON.parse(node ? node.textContent : "{}");
var items = Array.isArray(data.items) ? data.items : [];
var strings = Array.isArray(data.strings) ? data.strings : [];
items.forEach(function (it) {  // a repeated long text is stored once: put it back in its parts
  (Array.isArray(it.blocks) ? it.blocks : []).forEach(function (b) {
    (Array.isArray(b.parts) ? b.parts : []).forEach(function (p) {
      if (p && typeof p.ref === "number") { p.text = str(strings[p.ref]); }
    });
  });
});
var root = document.getElementById("browser");
var PAGE = 25, FOLD_LINES = 40, FOLD_CHARS = 6000;
var KINDS = {question: 1, answer: 1, baseline: 1, reference: 1, judgment: 1, turn: 1, note: 1};
var MARKS = {failed: 1, reasked: 1, skipped: 1};
var state = {q: "", tags: {}, flags: {}, page: 0, open: {}, check: false};

function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) { e.className = cls; }
  if (text !== undefined && text !== null) { e.textContent = String(text); }
  return e;
}
function str(v) { return v === undefined || v === null ? "" : String(v); }
function keys(o) { return o && typeof o === "object" ? Object.keys(o) : []; }
function vals(v) { return Array.isArray(v) ? v.map(str) : [str(v)]; }

function parseHash() {
  var out = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    if (!kv) { return; }
    var i = kv.indexOf("=");
    var k = i < 0 ? kv : kv.slice(0, i), v = i < 0 ? "" : kv.slice(i + 1);
    try { v = decodeURIComponent(v); } catch (e) { /* keep it raw */ }
    out[k] = v;
  });
  return out;
}

function hay(it) {
  if (typeof it._hay === "string") { return it._hay; }
  var a = [str(it.id), str(it.title), str(it.score)];
  keys(it.tags).forEach(function (k) { vals(it.tags[k]).forEach(function (v) { a.push(k + ": " + v); }); });
  (it.flags || []).forEach(function (f) { a.push(str(f)); });
  (it.blocks || []).forEach(function (b) {
    a.push(str(b.label), str(b.verdict), str(b.group), str(b.status), str(b.role));
    (b.parts || []).forEach(function (p) {
      if (p.image) { a.push(str(p.image.caption), str(p.image.missing)); } else { a.push(str(p.text)); }
    });
  });
  it._hay = a.join("\n").toLowerCase();
  return it._hay;
}

function matching() {
  var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
  var want = keys(state.flags).filter(function (f) { return state.flags[f]; });
  return items.filter(function (it) {
    var tags = it.tags || {};
    for (var k in state.tags) {
      if (state.tags[k] !== "" && (!(k in tags) || vals(tags[k]).indexOf(state.tags[k]) < 0)) { return false; }
    }
    if (want.length && !want.some(function (f) { return (it.flags || []).indexOf(f) >= 0; })) { return false; }
    if (words.length) {
      var h = hay(it);
      for (var i = 0; i < words.length; i++) { if (h.indexOf(words[i]) < 0) { return false; } }
    }
    return true;
  });
}

function textNode(s, hl, mono) {
  var box = el("div", "textbox"), div = el("div", mono ? "text mono" : "text");
  var k = hl ? s.lastIndexOf(hl) : -1;
  if (k >= 0) {
    div.appendChild(document.createTextNode(s.slice(0, k)));
    div.appendChild(el("mark", null, hl));
    div.appendChild(document.createTextNode(s.slice(k + hl.length)));
  } else {
    div.textContent = s;
  }
  box.appendChild(div);
  var lines = s.split("\n").length;
  if (lines > FOLD_LINES || s.length > FOLD_CHARS) {
    div.classList.add("folded");
    var btn = el("button", "more", "show all (" + lines + " lines)");
    btn.type = "button";
    btn.addEventListener("click", function () {
      var folded = div.classList.toggle("folded");
      btn.textContent = folded ? "show all (" + lines + " lines)" : "fold";
      if (folded) { showMarks(box); }
    });
    box.appendChild(btn);
  }
  return box;
}

function imageNode(im) {
  var fig = el("figure", "img");
  if (im.src) {
    var img = document.createElement("img");
    img.loading = state.check ? "eager" : "lazy";
    img.decoding = "async";
    img.alt = str(im.caption);
    var t = [];
    if (im.width && im.height) { t.push("original " + im.width + " \u00d7 " + im.height + " px"); }
    if (im.caption) { t.push(str(im.caption)); }
    img.title = t.join(" \u00b7 ");
    img.src = str(im.src);
    fig.appendChild(img);
  } else {
    fig.appendChild(el("div", "missing", "image missing: " + (str(im.missing) || "no image")));
  }
  if (im.caption) { fig.appendChild(el("figcaption", null, im.caption)); }
  return fig;
}

function blockNode(b) {
  var kind = KINDS[b.kind] ? b.kind : "note";
  var cls = "block kind-" + kind;
  if (kind === "turn") { cls += " role-" + (b.role === "user" || b.role === "assistant" ? b.role : "other"); }
  var st = MARKS[b.status] ? b.status : null;
  if (st) { cls += " st-" + st; }
  var d = el("div", cls), head = el("div", "bhead");
  head.appendChild(el("span", "kind", kind === "turn" ? (str(b.role) || "turn") : kind));
  if (b.label) { head.appendChild(el("span", "label", b.label)); }
  if (st) { head.appendChild(el("span", "badge st-" + st, st)); }
  if (b.verdict !== undefined && b.verdict !== null) { head.appendChild(el("span", "verdict tone-" + (b.tone === "good" || b.tone === "bad" ? b.tone : "neutral"), b.verdict)); }
  keys(b.meta).forEach(function (k) { head.appendChild(el("span", "bmeta", k + ": " + str(b.meta[k]))); });
  (Array.isArray(b.links) ? b.links : []).forEach(function (l) {
    var href = str(l && l[1]);
    if (!/^(https?:|file:|[^:]*$)/i.test(href)) { return; }  // a relative, http, https or file link only
    var a = el("a", "blink", str(l[0]));
    a.href = href;
    head.appendChild(a);
  });
  d.appendChild(head);
  var parts = Array.isArray(b.parts) ? b.parts : [];
  var hl = b.highlight ? str(b.highlight) : "", at = -1;
  if (hl) {
    for (var i = parts.length - 1; i >= 0; i--) {
      if (!parts[i].image && str(parts[i].text).indexOf(hl) >= 0) { at = i; break; }
    }
  }
  parts.forEach(function (p, i) {
    d.appendChild(p.image ? imageNode(p.image) : textNode(str(p.text), i === at ? hl : "", p.mono === true));
  });
  return d;
}

function blocksInto(body, blocks) {
  var i = 0;
  while (i < blocks.length) {
    var g = blocks[i].group;
    if (g === undefined || g === null) { body.appendChild(blockNode(blocks[i])); i++; continue; }
    var box = el("div", "group");
    box.appendChild(el("div", "ghead", g));
    while (i < blocks.length && blocks[i].group === g) { box.appendChild(blockNode(blocks[i])); i++; }
    body.appendChild(box);
  }
}

function itemNode(it) {
  var id = str(it.id), wrap = el("div", "item"), head = el("button", "head");
  head.type = "button";
  wrap.dataset.id = id;
  var tw = el("span", "tw", "\u25b8");
  head.appendChild(tw);
  head.appendChild(el("span", "id", id));
  head.appendChild(el("span", "title", it.title));
  keys(it.tags).forEach(function (k) {
    vals(it.tags[k]).forEach(function (v) { head.appendChild(el("span", "chip", k + ": " + v)); });
  });
  (it.flags || []).forEach(function (f) {
    head.appendChild(el("span", "badge" + (MARKS[f] ? " " + f : ""), f));
  });
  if (it.score !== undefined && it.score !== null) { head.appendChild(el("span", "score", it.score)); }
  wrap.appendChild(head);
  var body = null;
  function setOpen(open) {
    state.open[id] = open;
    wrap.classList.toggle("open", open);
    tw.textContent = open ? "\u25be" : "\u25b8";
    if (open && !body) {
      body = el("div", "body");
      blocksInto(body, Array.isArray(it.blocks) ? it.blocks : []);
      wrap.appendChild(body);
    }
    if (body) { body.hidden = !open; }
  }
  head.addEventListener("click", function () {
    setOpen(!state.open[id]);
    showMarks(wrap);
    if (state.open[id] && history.replaceState) { history.replaceState(null, "", "#item=" + encodeURIComponent(id)); }
  });
  if (state.check || state.open[id]) { setOpen(true); }
  return wrap;
}

var ui = {};
function build() {
  var controls = el("div", "controls");
  ui.q = el("input");
  ui.q.type = "search";
  ui.q.placeholder = "search ids, titles, tags, texts\u2026";
  ui.q.setAttribute("aria-label", "search items");
  ui.q.value = state.q;
  ui.q.addEventListener("input", function () { state.q = ui.q.value; state.page = 0; render(); });
  controls.appendChild(ui.q);
  var tagValues = {}, flags = [];
  items.forEach(function (it) {
    keys(it.tags).forEach(function (k) {
      var seen = (tagValues[k] = tagValues[k] || {});
      vals(it.tags[k]).forEach(function (v) { seen[v] = 1; });
    });
    (it.flags || []).forEach(function (f) { if (flags.indexOf(f) < 0) { flags.push(f); } });
  });
  keys(tagValues).forEach(function (k) {
    var sel = el("select");
    sel.setAttribute("aria-label", k);
    sel.appendChild(new Option("all " + k, ""));
    keys(tagValues[k]).sort().forEach(function (v) { sel.appendChild(new Option(v, v)); });
    state.tags[k] = "";
    sel.addEventListener("change", function () { state.tags[k] = sel.value; state.page = 0; render(); });
    controls.appendChild(sel);
  });
  if (flags.length) {
    var fl = el("span", "flags");
    flags.forEach(function (f) {
      var lab = el("label"), cb = el("input");
      cb.type = "checkbox";
      cb.addEventListener("change", function () { state.flags[f] = cb.checked; state.page = 0; render(); });
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(" " + f));
      fl.appendChild(lab);
    });
    controls.appendChild(fl);
  }
  ui.count = el("span", "count");
  controls.appendChild(ui.count);
  var openAll = el("button", null, "open page"), closeAll = el("button", null, "close all");
  openAll.type = closeAll.type = "button";
  openAll.addEventListener("click", function () { pageItems(matching()).forEach(function (it) { state.open[str(it.id)] = true; }); render(); });
  closeAll.addEventListener("click", function () { state.open = {}; render(); });
  controls.appendChild(openAll);
  controls.appendChild(closeAll);
  root.appendChild(controls);
  ui.pagers = [pager(), null];
  root.appendChild(ui.pagers[0].box);
  ui.list = el("div", "list");
  root.appendChild(ui.list);
  ui.pagers[1] = pager();
  root.appendChild(ui.pagers[1].box);
}

function pager() {
  var p = {box: el("div", "pager"), prev: el("button", null, "\u2039 previous"), label: el("span"),
           next: el("button", null, "next \u203a")};
  p.prev.type = p.next.type = "button";
  p.prev.addEventListener("click", function () { state.page--; render(); root.scrollIntoView({block: "start"}); });
  p.next.addEventListener("click", function () { state.page++; render(); root.scrollIntoView({block: "start"}); });
  p.box.appendChild(p.prev); p.box.appendChild(p.label); p.box.appendChild(p.next);
  return p;
}

function pageItems(m) { return state.check ? m : m.slice(state.page * PAGE, (state.page + 1) * PAGE); }

function showMarks(scope) {
  // a folded reply scrolls (inside its box) to the text its verdict was read from
  Array.prototype.forEach.call(scope.querySelectorAll(".text.folded > mark"), function (m) {
    var box = m.parentNode;
    box.scrollTop = Math.max(0, m.offsetTop - box.clientHeight / 2);
  });
}

function render() {
  var m = matching(), pages = Math.max(1, Math.ceil(m.length / PAGE));
  state.page = Math.min(Math.max(state.page, 0), pages - 1);
  ui.count.textContent = m.length + " of " + items.length + " items";
  ui.list.textContent = "";
  var shown = pageItems(m);
  shown.forEach(function (it) { ui.list.appendChild(itemNode(it)); });
  if (!shown.length) { ui.list.appendChild(el("div", "empty", "no item matches")); }
  showMarks(ui.list);
  ui.pagers.forEach(function (p) {
    p.box.hidden = state.check || pages < 2;
    p.label.textContent = "page " + (state.page + 1) + " of " + pages;
    p.prev.disabled = state.page === 0;
    p.next.disabled = state.page >= pages - 1;
  });
  return m;
}

function applyHash() {
  var h = parseHash();
  if ("q" in h) { state.q = h.q; ui.q.value = h.q; state.page = 0; }
  var m = render();
  if ("item" in h) {
    var id = h.item, at = -1;
    m.forEach(function (it, i) { if (at < 0 && str(it.id) === id) { at = i; } });
    if (at < 0 && items.some(function (it) { return str(it.id) === id; })) {
      state.q = ""; ui.q.value = ""; state.flags = {};
      keys(state.tags).forEach(function (k) { state.tags[k] = ""; });
      Array.prototype.forEach.call(root.querySelectorAll(".controls select"), function (s) { s.value = ""; });
      Array.prototype.forEach.call(root.querySelectorAll(".controls input[type=checkbox]"), function (c) { c.checked = false; });
      m = render();
      m.forEach(function (it, i) { if (at < 0 && str(it.id) === id) { at = i; } });
    }
    if (at >= 0) {
      state.page = Math.floor(at / PAGE);
      state.open[id] = true;
      render();
      Array.prototype.forEach.call(ui.list.children, function (n) {
        if (n.dataset && n.dataset.id === id) { reveal(n); }
      });
    }
  }
  return m;
}

function reveal(n) {
  // the page scrolls inside <body> (html.pinned): a scrolled window comes out blank in headless
  // Chromium's --screenshot, a scrolled element does not
  document.documentElement.classList.add("pinned");
  n.scrollIntoView({block: "start"});
  window.addEventListener("load", function () { n.scrollIntoView({block: "start"}); });
}

function done(m) {
  var imgs = Array.prototype.slice.call(document.images);
  Promise.all(imgs.map(function (img) {
    if (img.complete) { return Promise.resolve(); }
    return new Promise(function (res) {
      img.addEventListener("load", res);
      img.addEventListener("error", res);
    });
  })).then(function () {
    var ok = 0, bad = 0;
    imgs.forEach(function (img) { if (img.naturalWidth > 0) { ok++; } else { bad++; } });
    var b = document.body;
    b.setAttribute("data-items", String(m.length));
    b.setAttribute("data-images-ok", String(ok));
    b.setAttribute("data-images-broken", String(bad));
    b.setAttribute("data-ready", "1");
  });
}

function markOverflow() {
  // a box whose content is wider than it scrolls sideways: say so under it ("scroll sideways for more")
  Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (s) {
    if (s.scrollWidth > s.clientWidth + 1) { s.setAttribute("data-overflow", "1"); }
    else { s.removeAttribute("data-overflow"); }
  });
}

function layoutReport() {
  // for tests (#layoutcheck): every scroll box, whether its content overflows and whether its hint
  // shows, and whether the page itself is wider than the window (cut with no hint)
  markOverflow();
  var boxes = Array.prototype.map.call(document.querySelectorAll(".scroll"), function (s) {
    var hint = s.nextElementSibling, r = s.getBoundingClientRect();
    var cap = s.closest("figure") ? s.closest("figure").querySelector("figcaption")
      : s.closest("section") ? s.closest("section").querySelector("h2,h3") : null;
    var kind = s.closest("figure.chart") ? "chart" : s.querySelector("table.lb") ? "leaderboard" : "table";
    return {name: cap ? cap.textContent : "", kind: kind, overflow: s.scrollWidth > s.clientWidth + 1,
            hint: !!(hint && hint.className === "scroll-hint" && hint.offsetWidth > 0 && hint.offsetHeight > 0),
            content: s.scrollWidth, box: s.clientWidth, right: Math.round(r.right)};
  });
  var de = document.documentElement, out = JSON.stringify({
    window: window.innerWidth, page: Math.max(de.scrollWidth, document.body.scrollWidth), view: de.clientWidth,
    boxes: boxes});
  document.body.setAttribute("data-layout", out);
}

window.addEventListener("resize", markOverflow);
state.check = "check" in parseHash();
if (!root) {
  markOverflow();
  if ("layoutcheck" in parseHash()) { layoutReport(); }
  if (state.check) { done([]); }
  return;
}
build();
var first = applyHash();
markOverflow();
if ("layoutcheck" in parseHash()) { layoutReport(); }
window.addEventListener("hashchange", function () { state.check = "check" in parseHash(); applyHash(); });
if (state.check) { done(first); }
})();
"""

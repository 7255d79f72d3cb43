// The static CSS and JavaScript of report.html (see html_report.cpp). They hold no input data: the
// page reads everything from the JSON in <script id="data"> and shows input text via textContent
// (or canvas fillText) only, never as markup. The page's script is kHtmlJs, then the MoE part
// (kHtmlMoeJs, only for roots with in-kernel MoE traces), then kHtmlJsStart.
namespace ascprof::report {

extern const char* const kHtmlCss;
extern const char* const kHtmlJs;
extern const char* const kHtmlJsStart;
extern const char* const kHtmlMoeCss;
extern const char* const kHtmlMoeJs;

const char* const kHtmlCss = R"CSS(
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1f3550;color:#fff;padding:10px 16px}header h1{margin:0;font-size:18px}
.meta{font-size:12px;opacity:.85}
nav{position:sticky;top:0;z-index:5;background:#e9edf2;padding:6px 16px;border-bottom:1px solid #cfd6de}
nav a{margin-right:16px;color:#1f3550;text-decoration:none;font-weight:600}
section{background:#fff;margin:12px 16px;padding:10px 14px;border:1px solid #dde2e8;border-radius:6px}
h2{font-size:16px;margin:4px 0 8px}h3{font-size:14px;margin:10px 0 6px}
.hint{color:#66707c;font-size:12px;font-weight:normal}
.cols{display:flex;gap:16px;flex-wrap:wrap}.col{flex:1 1 420px;min-width:0}
.scroll{overflow:auto;max-height:420px}.tbl{max-height:360px}
.rank-row{display:flex;align-items:center;gap:8px;margin:2px 0;cursor:pointer}
.rank-row:hover{background:#f0f4f9}
.rank-label{width:70px;flex:none;text-align:right;font-variant-numeric:tabular-nums}
.bar-box{flex:1 1 auto;height:14px;background:#eef1f5;position:relative;min-width:120px}
.bar{height:100%;display:flex}.bar span{height:100%}
.seg-head{background:#f0a04b}.seg-main{background:#3b7dd8}.seg-tail{background:#7fb069}.seg-bubble{background:#e4572e}
.rank-text{flex:none;width:300px;font-size:12px;color:#3a4450;font-variant-numeric:tabular-nums}
#findings{padding-left:22px;margin:4px 0}#findings li{margin:4px 0;cursor:pointer}
#findings li:hover{background:#f0f4f9}
.sev{display:inline-block;min-width:54px;text-align:center;border-radius:3px;color:#fff;font-size:11px;padding:0 4px;margin-right:6px}
.sev-critical{background:#8b0000}.sev-high{background:#d1382a}.sev-medium{background:#e08a1e}.sev-low{background:#5a8f29}.sev-info,.sev-other{background:#6b7785}
.ftype{font-weight:600;margin-right:6px}.fsub{color:#66707c;font-size:12px}
.toolbar{display:flex;gap:8px;align-items:center;margin:4px 0;flex-wrap:wrap}
button{font:inherit;padding:2px 8px;border:1px solid #b8c2cc;background:#f7f9fb;border-radius:4px;cursor:pointer}
button:hover{background:#e8eef5}button.active{background:#1f3550;color:#fff;border-color:#1f3550}
#tl-wrap{position:relative;border:1px solid #dde2e8}
#timeline{display:block;cursor:grab}#timeline.dragging{cursor:grabbing}
.tip{position:absolute;pointer-events:none;background:rgba(20,28,38,.92);color:#fff;padding:4px 6px;border-radius:4px;font-size:12px;max-width:480px;white-space:pre-wrap;word-break:break-all}
.legend-item{display:inline-flex;align-items:center;margin-right:10px;font-size:12px}
.swatch{display:inline-block;width:12px;height:10px;margin-right:4px;border-radius:2px}
.step-list{display:flex;flex-wrap:wrap;gap:4px;max-height:120px;overflow:auto;margin:4px 0}
.step-list button{min-width:44px;font-variant-numeric:tabular-nums}
.step-list button.embedded{border-color:#3b7dd8}
.anatomy{display:flex;height:22px;background:#eef1f5;margin:4px 0;position:relative}
.anatomy span{height:100%}
.anatomy .bubble-overlay{position:absolute;right:0;top:0;height:6px;background:#e4572e}
table{border-collapse:collapse;font-size:12px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #e6eaef;padding:2px 6px;text-align:left;white-space:nowrap}
th{background:#f2f5f8;position:sticky;top:0}
tr.clickable{cursor:pointer}tr.clickable:hover{background:#f0f4f9}tr.active{background:#dbe8f8}
table.kv td:first-child{color:#66707c}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:8px}
.card{border:1px solid #dde2e8;border-radius:6px;padding:6px 8px;background:#fbfcfd}
.card h4{margin:0 0 4px;font-size:12px;word-break:break-all}
.card dl{display:grid;grid-template-columns:max-content 1fr;gap:0 8px;margin:0;font-size:11px}
.card dt{color:#66707c}.card dd{margin:0;word-break:break-all}
th.sortable{cursor:pointer}th.sortable:hover{background:#e3e9f0}
.dd-card-open{max-height:560px;overflow:auto}.dd-card-open .ftype{word-break:break-word}
.dd-detail{border-top:1px solid #e6eaef;margin-top:6px;padding-top:4px}.dd-detail h5{margin:0 0 2px;font-size:12px}
.dd-card-open dd{word-break:break-word}.dd-facts{margin:0;padding-left:16px}
)CSS";

const char* const kHtmlJs = R"JS(
(function () {
  'use strict';
  // All input arrives as JSON data; it is only ever shown with textContent or canvas fillText.
  const D = JSON.parse(document.getElementById('data').textContent);
  const S = D.strings;
  // interned table columns hold indexes into D.strings: resolved once here
  ['steps', 'layers', 'blocks'].forEach((k) => {
    const t = D[k];
    if (t) (t.interned || []).forEach((c) => t.rows.forEach((r) => { r[c] = S[r[c]]; }));
  });
  const LANE_COLORS = ['#2f6fb3', '#2e9d6a', '#c2572b', '#8a4fb8', '#7d7d7d'];
  const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];
  const SEV_COLORS = {critical: '#8b0000', high: '#d1382a', medium: '#e08a1e', low: '#5a8f29', info: '#6b7785'};
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;  // cls is always a constant of this script, never input
    return e;
  }
  function colmap(t) { const m = {}; (t.cols || []).forEach((c, i) => { m[c] = i; }); return m; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : NaN; }
  function ms(v) { v = num(v); return isNaN(v) ? '–' : v.toFixed(3) + ' ms'; }
  function pct(v) { v = num(v); return isNaN(v) ? '–' : (v * 100).toFixed(1) + ' %'; }
  function fmtUs(us) {
    const a = Math.abs(us);
    if (a >= 1e6) return (us / 1e6).toFixed(3) + ' s';
    if (a >= 1e3) return (us / 1e3).toFixed(3) + ' ms';
    return us.toFixed(a < 10 ? 3 : 1) + ' µs';
  }
  function severityClass(s) { return SEVERITIES.indexOf(s) >= 0 ? 'sev sev-' + s : 'sev sev-other'; }

  // ---- tables and indexes -------------------------------------------------------------------
  const SC = colmap(D.steps), LC = colmap(D.layers), BC = colmap(D.blocks);
  const AC = {}; (D.anatomy_cols || []).forEach((c, i) => { AC[c] = i; });
  const KC = {}; (D.kernel_cols || []).forEach((c, i) => { KC[c] = i; });
  const ranks = D.ranks || [];
  const rankOf = {}; ranks.forEach((r, i) => { rankOf[r.id] = i; });
  const embeddedSeg = new Set(D.embedded_segments || []);
  const steps = D.steps.rows || [];
  const stepsOfRank = ranks.map(() => []);
  const segRow = {};
  steps.forEach((row, i) => {
    const ri = rankOf[row[SC.rank_id]];
    if (ri === undefined) return;
    segRow[row[SC.segment_id]] = i;
    stepsOfRank[ri].push(i);
  });
  // the "steps" of a rank for overview charts: step segments, or all segments when it has none
  const realSteps = stepsOfRank.map((list) => {
    const s = list.filter((i) => steps[i][SC.segment_type] === 'step');
    return s.length ? s : list;
  });
  function groupBy(table, cm) {
    const m = {};
    (table.rows || []).forEach((row, i) => { const k = row[cm.segment_id]; (m[k] = m[k] || []).push(i); });
    return m;
  }
  const layersOfSeg = groupBy(D.layers, LC), blocksOfSeg = groupBy(D.blocks, BC);
  function anatomyOf(seg) { return (D.anatomy || {})[seg]; }

  // ---- header ---------------------------------------------------------------------------------
  (function header() {
    const m = D.meta;
    $('meta').textContent = 'root ' + m.root + ' · ' + ranks.length + ' ranks · ' + steps.length +
      ' segments · ' + m.total_events + ' kernels (' + m.embedded_events + ' embedded in this page, budget ' +
      m.event_budget + ') · ' + (D.findings || []).length + ' findings · capture span ' + fmtUs(m.span_us);
  })();

  // ---- L1: per-rank bars ----------------------------------------------------------------------
  function rankStats(ri) {
    const list = realSteps[ri];
    let sum = 0, max = 0, head = 0, main = 0, tail = 0, bub = 0, na = 0;
    list.forEach((i) => {
      const w = num(steps[i][SC.wall_ms]);
      if (!isNaN(w)) { sum += w; max = Math.max(max, w); }
      const a = anatomyOf(steps[i][SC.segment_id]);
      if (a) {
        head += num(a[AC.head_wall_ms]) || 0; main += num(a[AC.main_wall_ms]) || 0;
        tail += num(a[AC.tail_wall_ms]) || 0; bub += num(a[AC.bubble_ratio]) || 0; na++;
      }
    });
    const n = list.length;
    return {n: n, mean: n ? sum / n : 0, max: max, head: head, main: main, tail: tail, bubble: na ? bub / na : NaN};
  }
  (function rankBars() {
    const box = $('rank-bars');
    const stats = ranks.map((r, i) => rankStats(i));
    const top = Math.max(1e-9, ...stats.map((s) => s.mean));
    const shown = Math.min(ranks.length, 512);
    for (let i = 0; i < shown; i++) {
      const st = stats[i];
      const row = el('div', null, 'rank-row');
      row.appendChild(el('span', ranks[i].id, 'rank-label'));
      const boxEl = el('div', null, 'bar-box');
      const bar = el('div', null, 'bar');
      bar.style.width = (100 * st.mean / top).toFixed(2) + '%';
      const tot = st.head + st.main + st.tail;
      [['seg-head', st.head], ['seg-main', st.main], ['seg-tail', st.tail]].forEach(([c, v]) => {
        const s = el('span', null, c);
        s.style.width = (tot > 0 ? 100 * v / tot : (c === 'seg-main' ? 100 : 0)).toFixed(2) + '%';
        bar.appendChild(s);
      });
      boxEl.appendChild(bar);
      row.appendChild(boxEl);
      row.appendChild(el('span', st.n + ' steps · mean ' + ms(st.mean) + ' · max ' + ms(st.max) +
        ' · bubble ' + pct(st.bubble), 'rank-text'));
      row.addEventListener('click', () => { selectRank(i); });
      box.appendChild(row);
    }
    if (shown < ranks.length) box.appendChild(el('div', (ranks.length - shown) + ' more ranks not listed', 'hint'));
  })();

  // ---- L1: findings ---------------------------------------------------------------------------
  const findings = (D.findings || []).slice().sort((a, b) => {
    const sa = SEVERITIES.indexOf(a.severity), sb = SEVERITIES.indexOf(b.severity);
    return (sa < 0 ? 9 : sa) - (sb < 0 ? 9 : sb) || String(a.finding_type).localeCompare(String(b.finding_type));
  });
  function findingRanks(f) { return (f.suspected_ranks && f.suspected_ranks.length ? f.suspected_ranks : f.rank_ids) || []; }
  function findingSegment(f) {
    const seg = f.metrics && typeof f.metrics === 'object' ? f.metrics.segment_id : undefined;
    return typeof seg === 'string' && segRow[seg] !== undefined ? segRow[seg] : -1;
  }
  (function findingList() {
    const ol = $('findings');
    const counts = {};
    findings.forEach((f) => { counts[f.severity] = (counts[f.severity] || 0) + 1; });
    $('findings-summary').textContent = findings.length ? findings.length + ' findings: ' +
      SEVERITIES.filter((s) => counts[s]).map((s) => counts[s] + ' ' + s).join(', ') : 'no findings';
    findings.forEach((f) => {
      const li = el('li');
      li.appendChild(el('span', f.severity, severityClass(f.severity)));
      li.appendChild(el('span', f.finding_type, 'ftype'));
      li.appendChild(el('span', f.summary));
      const ev = (f.evidence_ids || []).length;
      const sub = 'ranks ' + findingRanks(f).join(', ') + ' · confidence ' + f.confidence + ' · ' + ev +
        ' evidence ids' + ((f.limitations || []).length ? ' · limitation: ' + f.limitations.join('; ') : '');
      li.appendChild(el('div', sub, 'fsub'));
      li.addEventListener('click', () => {
        const si = findingSegment(f);
        if (si >= 0) { selectSegment(si); zoomToSegment(si); }
        else { const ri = rankOf[findingRanks(f)[0]]; if (ri !== undefined) selectRank(ri); }
      });
      ol.appendChild(li);
    });
  })();

  // ---- L1: heat map ---------------------------------------------------------------------------
  (function heatmap() {
    const cv = $('heatmap');
    const cols = Math.max(0, ...realSteps.map((l) => l.length));
    if (!ranks.length || !cols) { cv.height = 0; $('heat-legend').textContent = 'no steps'; return; }
    let lo = Infinity, hi = -Infinity;
    realSteps.forEach((l) => l.forEach((i) => { const w = num(steps[i][SC.wall_ms]); if (!isNaN(w)) { lo = Math.min(lo, w); hi = Math.max(hi, w); } }));
    const gutter = 70;
    const avail = Math.max(300, (cv.parentElement.clientWidth || 900) - gutter - 10);
    const cw = Math.max(1, Math.min(28, Math.floor(avail / cols)));
    const ch = Math.max(2, Math.min(18, Math.floor(600 / ranks.length)));
    cv.width = gutter + cols * cw; cv.height = ranks.length * ch;
    const ctx = cv.getContext('2d');
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, cv.width, cv.height);
    ctx.font = Math.min(11, ch) + 'px sans-serif'; ctx.textBaseline = 'middle';
    const color = (w) => {
      const t = hi > lo ? (w - lo) / (hi - lo) : 0.5;
      return 'hsl(' + Math.round(220 - 220 * t) + ',70%,' + Math.round(62 - 18 * t) + '%)';
    };
    ranks.forEach((r, ri) => {
      if (ch >= 8) { ctx.fillStyle = '#333'; ctx.fillText(r.id, 2, ri * ch + ch / 2); }
      realSteps[ri].forEach((i, k) => {
        const w = num(steps[i][SC.wall_ms]);
        ctx.fillStyle = isNaN(w) ? '#ddd' : color(w);
        ctx.fillRect(gutter + k * cw, ri * ch, Math.max(1, cw - (cw > 3 ? 1 : 0)), Math.max(1, ch - 1));
      });
    });
    $('heat-legend').textContent = 'blue = ' + ms(lo) + ' … red = ' + ms(hi) + ' (' + ranks.length + ' ranks × up to ' + cols + ' steps)';
    const cellAt = (ev) => {
      const b = cv.getBoundingClientRect();
      const x = (ev.clientX - b.left) * cv.width / b.width, y = (ev.clientY - b.top) * cv.height / b.height;
      const ri = Math.floor(y / ch), k = Math.floor((x - gutter) / cw);
      return ri >= 0 && ri < ranks.length && k >= 0 && k < realSteps[ri].length ? realSteps[ri][k] : -1;
    };
    cv.addEventListener('mousemove', (ev) => {
      const i = cellAt(ev);
      if (i >= 0) cv.title = steps[i][SC.rank_id] + ' · step ' + (realSteps[rankOf[steps[i][SC.rank_id]]].indexOf(i) + 1) + ' · wall ' + ms(steps[i][SC.wall_ms]);
    });
    cv.addEventListener('click', (ev) => { const i = cellAt(ev); if (i >= 0) { selectSegment(i); zoomToSegment(i); } });
  })();

  // ---- timeline -------------------------------------------------------------------------------
  const cv = $('timeline'), tip = $('tl-tip');
  const ctx = cv.getContext('2d');
  const BG = '#ffffff';
  const GUTTER = 128, AXIS_H = 22;
  const span = Math.max(1, num(D.meta.span_us) || 1);
  const binUs = num(D.meta.bin_us) || 1;
  const nBins = D.meta.bins || 0;
  const view = {s: 0, e: span};
  let selected = null;  // {ri, s, e}
  // Per rank and lane: kernel indexes sorted by start, for a binary search of the visible window.
  const lanesOf = ranks.map((r) => {
    const ev = r.ev; const n = ev.s.length;
    const starts = Float64Array.from(ev.s), durs = Float64Array.from(ev.d);
    const buckets = D.lanes.map(() => []);
    for (let i = 0; i < n; i++) buckets[ev.lane[i]].push(i);
    return buckets.map((b) => {
      const idx = Int32Array.from(b).sort((a, c) => starts[a] - starts[c]);
      const s = new Float64Array(idx.length), e = new Float64Array(idx.length);
      let maxDur = 0;
      for (let k = 0; k < idx.length; k++) { s[k] = starts[idx[k]]; e[k] = s[k] + durs[idx[k]]; maxDur = Math.max(maxDur, durs[idx[k]]); }
      return {idx: idx, s: s, e: e, maxDur: maxDur};
    });
  });
  const bubblesOf = ranks.map(() => []);
  (D.bubbles || []).forEach((b) => { if (bubblesOf[b[0]]) bubblesOf[b[0]].push(b); });
  bubblesOf.forEach((l) => l.sort((a, b) => a[1] - b[1]));
  // finding marks: a segment's time span when the finding names one, else the whole rank
  const marks = [];
  findings.forEach((f) => {
    const si = findingSegment(f);
    if (si >= 0) {
      const row = steps[si];
      marks.push({ri: rankOf[row[SC.rank_id]], s: num(row[SC.start_us]), e: num(row[SC.end_us]), f: f});
    } else {
      findingRanks(f).forEach((id) => { if (rankOf[id] !== undefined) marks.push({ri: rankOf[id], s: NaN, e: NaN, f: f}); });
    }
  });
  // vertical layout: per rank, the lanes that have anything, then the bubble axis
  let layout = [], totalH = 0, laneH = 12;
  function computeLayout() {
    const used = ranks.map((r, ri) => D.lanes.map((_, l) => (r.hist[l] && r.hist[l].length) || lanesOf[ri][l].idx.length ? l : -1).filter((l) => l >= 0));
    const rows = used.reduce((a, u) => a + Math.max(1, u.length) + 1, 0);
    laneH = Math.max(3, Math.min(14, Math.floor(1800 / Math.max(1, rows))));
    let y = AXIS_H;
    layout = ranks.map((r, ri) => {
      const lanes = used[ri].map((l) => { const o = {lane: l, y: y}; y += laneH; return o; });
      if (!lanes.length) y += laneH;
      const by = y; y += Math.max(3, Math.round(laneH * 0.8));
      const block = {top: lanes.length ? lanes[0].y : by - laneH, lanes: lanes, bubbleY: by, bottom: y};
      y += 4;
      return block;
    });
    totalH = y + 4;
  }
  // Canvas width is cached at resize: reading clientWidth per kernel forces a layout query each time.
  let canvasW = 800;
  function plotW() { return Math.max(10, canvasW - GUTTER); }
  function xOf(t) { return GUTTER + (t - view.s) / (view.e - view.s) * plotW(); }
  function tOf(x) { return view.s + (x - GUTTER) / plotW() * (view.e - view.s); }
  function lowerBound(a, v) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; } return lo; }

  function resize() {
    computeLayout();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(400, cv.parentElement.clientWidth);
    canvasW = w;
    cv.style.width = w + 'px'; cv.style.height = totalH + 'px';
    cv.width = Math.round(w * dpr); cv.height = Math.round(totalH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }
  let pending = false;
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }

  function drawAxis(W) {
    ctx.fillStyle = '#f2f5f8'; ctx.fillRect(0, 0, W, AXIS_H);
    const spanV = view.e - view.s;
    // tick step: 1, 2 or 5 × 10^k µs, about one label per 110 px
    const raw = spanV / Math.max(1, plotW() / 110);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = raw / p < 2 ? 2 * p : raw / p < 5 ? 5 * p : 10 * p;
    ctx.fillStyle = '#3a4450'; ctx.strokeStyle = '#c9d1da'; ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
    for (let t = Math.ceil(view.s / step) * step; t <= view.e; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS_H - 6); ctx.lineTo(x, totalH); ctx.stroke();
      ctx.fillText(fmtUs(t), x + 3, AXIS_H / 2);
    }
  }
  // The busy histogram of one lane over the visible window: one value per pixel column (mean busy
  // of the bins under it), heights quantised to whole pixels so equal neighbours merge into one rect.
  function drawHist(h, y, color, alpha) {
    if (!h || !h.length) return;
    const W = plotW();
    ctx.fillStyle = color; ctx.globalAlpha = alpha;
    let runX = -1, runLvl = 0;
    const flush = (x) => { if (runX >= 0 && runLvl > 0) ctx.fillRect(GUTTER + runX, y + laneH - runLvl, x - runX, runLvl); };
    const tpp = (view.e - view.s) / W;  // µs per pixel
    for (let px = 0; px < W; px++) {
      const t0 = view.s + px * tpp, t1 = t0 + tpp;
      let b0 = Math.floor(t0 / binUs), b1 = Math.floor(t1 / binUs);
      if (b1 < 0 || b0 >= nBins) { flush(px); runX = -1; continue; }
      b0 = Math.max(0, b0); b1 = Math.min(nBins - 1, Math.max(b0, b1));
      let sum = 0; for (let b = b0; b <= b1; b++) sum += h[b];
      const lvl = Math.round(sum / (b1 - b0 + 1) / 1000 * (laneH - 1));
      if (runX < 0 || lvl !== runLvl) { flush(px); runX = px; runLvl = lvl; }
    }
    flush(W);
    ctx.globalAlpha = 1;
  }
  // Kernels of one lane in the visible window. Kernels closer than half a pixel merge into one
  // rect, so a zoomed-out view of 100k kernels costs a few hundred fillRect calls. A merged rect is
  // as tall as the busy share of its span: one 17 µs collective per 6 ms pixel must not look like a
  // saturated lane.
  function drawKernels(ri, L, y, color) {
    if (!L.idx.length) return 0;
    const names = D.ranks[ri].ev.cells[KC.name];
    ctx.fillStyle = color;
    const vs = view.s, ve = view.e, k = plotW() / (ve - vs);
    let i = lowerBound(L.s, vs - L.maxDur), drawn = 0;
    let rx0 = 0, rx1 = -1e9, busy = 0, runFirst = -1, runCount = 0;
    const full = laneH - 2;
    const flush = () => {
      if (runCount === 0) return;
      const w = Math.max(1, rx1 - rx0);
      const h = Math.max(1, Math.round(full * Math.min(1, busy * k / w)));
      ctx.fillRect(rx0, y + 1 + full - h, w, h);
      if (runCount === 1 && w > 60 && laneH >= 10 && names) {
        // the name cut to the rect's width (estimated glyph width; no clip region per label)
        const fs = laneH - 3, fit = Math.floor((Math.min(w, canvasW - rx0) - 4) / (fs * 0.6));
        const name = S[names[L.idx[runFirst]]];
        ctx.fillStyle = '#fff'; ctx.font = fs + 'px sans-serif'; ctx.textBaseline = 'middle';
        ctx.fillText(name.length > fit ? name.slice(0, Math.max(0, fit - 1)) + '…' : name, Math.max(rx0, GUTTER) + 2, y + laneH / 2);
        ctx.fillStyle = color;
      }
    };
    for (; i < L.s.length && L.s[i] <= ve; i++) {
      if (L.e[i] < vs) continue;
      const x0 = GUTTER + (L.s[i] - vs) * k, x1 = GUTTER + (L.e[i] - vs) * k;
      drawn++;
      if (x0 <= rx1 + 0.5) { rx1 = Math.max(rx1, x1); busy += L.e[i] - L.s[i]; runCount++; }
      else { flush(); rx0 = x0; rx1 = x1; busy = L.e[i] - L.s[i]; runFirst = i; runCount = 1; }
    }
    flush();
    return drawn;
  }
  function draw() {
    const t0 = performance.now();
    const W = canvasW;
    ctx.fillStyle = BG; ctx.fillRect(0, 0, W, totalH);
    drawAxis(W);
    ctx.save(); ctx.beginPath(); ctx.rect(GUTTER, 0, W - GUTTER, totalH); ctx.clip();
    let drawn = 0;
    // Level of detail: while a pixel spans a whole histogram bin or more, the busy histogram says
    // all a pixel can show, so the kernels are not visited at all (the cost stays flat in the
    // number of embedded kernels). Closer in, kernels are drawn over the shaded histogram.
    const histOnly = (view.e - view.s) / plotW() >= binUs;
    layout.forEach((blk, ri) => {
      const r = ranks[ri];
      (r.embedded || []).forEach((sp) => {  // where raw kernels exist: a faint band
        ctx.fillStyle = '#f1f6fd'; const x0 = xOf(sp[0]);
        ctx.fillRect(x0, blk.top, Math.max(1, xOf(sp[1]) - x0), blk.bubbleY - blk.top);
      });
      blk.lanes.forEach((ln) => {
        if (histOnly) { drawHist(r.hist[ln.lane], ln.y, LANE_COLORS[ln.lane], 1); return; }
        drawHist(r.hist[ln.lane], ln.y, LANE_COLORS[ln.lane], 0.35);
        drawn += drawKernels(ri, lanesOf[ri][ln.lane], ln.y, LANE_COLORS[ln.lane]);
      });
      const bh = blk.bottom - blk.bubbleY;
      ctx.fillStyle = '#fbf3ea'; ctx.fillRect(GUTTER, blk.bubbleY, W - GUTTER, bh);
      ctx.fillStyle = '#e07b1f';
      // gaps closer than a pixel merge into one rect, as kernels do (thousands of gaps per rank)
      const bl = bubblesOf[ri];
      let g0 = 0, g1 = -1e9;
      for (let k = 0; k < bl.length; k++) {
        if (bl[k][2] < view.s || bl[k][1] > view.e) continue;
        const x0 = xOf(bl[k][1]), x1 = xOf(bl[k][2]);
        if (x0 <= g1 + 1) { g1 = Math.max(g1, x1); continue; }
        if (g1 > -1e9) ctx.fillRect(g0, blk.bubbleY, Math.max(1, g1 - g0), bh);
        g0 = x0; g1 = x1;
      }
      if (g1 > -1e9) ctx.fillRect(g0, blk.bubbleY, Math.max(1, g1 - g0), bh);
    });
    marks.forEach((m) => {
      const blk = layout[m.ri]; if (!blk) return;
      ctx.fillStyle = SEV_COLORS[m.f.severity] || '#6b7785';
      if (isNaN(m.s)) { ctx.fillRect(GUTTER, blk.bottom - 2, W - GUTTER, 2); return; }
      const x0 = xOf(m.s), x1 = Math.max(x0 + 2, xOf(m.e));
      ctx.fillRect(x0, blk.bottom - 2, x1 - x0, 2);
      ctx.beginPath(); ctx.moveTo(x0, blk.bubbleY - 5); ctx.lineTo(x0 + 5, blk.bubbleY); ctx.lineTo(x0, blk.bubbleY + 5); ctx.fill();
    });
    if (selected && layout[selected.ri]) {
      const blk = layout[selected.ri];
      ctx.strokeStyle = '#1f3550'; ctx.lineWidth = 1.5;
      ctx.strokeRect(xOf(selected.s), blk.top - 1, Math.max(2, xOf(selected.e) - xOf(selected.s)), blk.bottom - blk.top + 2);
      ctx.lineWidth = 1;
    }
    ctx.restore();
    // gutter labels last, over everything
    ctx.fillStyle = '#f7f9fb'; ctx.fillRect(0, AXIS_H, GUTTER - 2, totalH - AXIS_H);
    ctx.textBaseline = 'middle';
    layout.forEach((blk, ri) => {
      ctx.fillStyle = '#1d232b'; ctx.font = 'bold 11px sans-serif';
      ctx.fillText(ranks[ri].id, 4, blk.top + Math.min(6, laneH / 2), GUTTER - 70);
      ctx.font = Math.max(7, Math.min(10, laneH - 2)) + 'px sans-serif'; ctx.fillStyle = '#66707c';
      if (laneH >= 8) {
        ctx.textAlign = 'right';
        blk.lanes.forEach((ln) => ctx.fillText(D.lanes[ln.lane], GUTTER - 6, ln.y + laneH / 2));
        ctx.textAlign = 'left';
      }
      if (marks.some((m) => m.ri === ri)) { ctx.fillStyle = '#d1382a'; ctx.fillRect(0, blk.top, 3, blk.bottom - blk.top); }
      ctx.strokeStyle = '#e6eaef'; ctx.beginPath(); ctx.moveTo(0, blk.bottom + 2.5); ctx.lineTo(W, blk.bottom + 2.5); ctx.stroke();
    });
    const dt = performance.now() - t0;
    $('tl-status').textContent = 'view ' + fmtUs(view.s) + ' – ' + fmtUs(view.e) + ' (' + fmtUs(view.e - view.s) + ') · ' +
      (histOnly ? 'busy histogram (' + fmtUs(binUs) + ' bins; zoom in for kernels)' : drawn + ' kernels in view') +
      ' · drawn in ' + dt.toFixed(1) + ' ms';
    cv.dataset.drawMs = dt.toFixed(2);
    cv.dataset.kernelsInView = String(drawn);
  }
  function setView(s, e) {
    const minSpan = 0.05, maxSpan = span * 1.2;
    let w = Math.min(maxSpan, Math.max(minSpan, e - s));
    const c = (s + e) / 2;
    s = c - w / 2;
    // keep some of the capture on screen
    s = Math.min(Math.max(s, -w * 0.9), span - w * 0.1);
    view.s = s; view.e = s + w;
    schedule();
  }
  function zoomAt(x, factor) {
    const t = tOf(x), w = (view.e - view.s) * factor;
    const f = (x - GUTTER) / plotW();
    setView(t - f * w, t - f * w + w);
  }
  cv.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const b = cv.getBoundingClientRect();
    zoomAt(Math.max(GUTTER, ev.clientX - b.left), Math.exp(ev.deltaY * 0.0015));
  }, {passive: false});
  let drag = null;
  cv.addEventListener('mousedown', (ev) => { drag = {x: ev.clientX, s: view.s, e: view.e}; cv.classList.add('dragging'); });
  window.addEventListener('mouseup', () => { drag = null; cv.classList.remove('dragging'); });
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    const dt = -(ev.clientX - drag.x) / plotW() * (drag.e - drag.s);
    setView(drag.s + dt, drag.e + dt);
  });
  cv.addEventListener('mousemove', (ev) => {
    if (drag) { tip.hidden = true; return; }
    const b = cv.getBoundingClientRect();
    const x = ev.clientX - b.left, y = ev.clientY - b.top;
    const text = hoverText(x, y);
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text; tip.hidden = false;
    tip.style.left = Math.min(x + 12, canvasW - 300) + 'px'; tip.style.top = (y + 14) + 'px';
  });
  cv.addEventListener('mouseleave', () => { tip.hidden = true; });
  function hoverText(x, y) {
    if (x < GUTTER) return null;
    const t = tOf(x), tol = (view.e - view.s) / plotW() * 2;
    for (let ri = 0; ri < layout.length; ri++) {
      const blk = layout[ri];
      if (y < blk.top || y > blk.bottom) continue;
      if (y >= blk.bubbleY) {
        const bl = bubblesOf[ri];
        for (let k = 0; k < bl.length; k++)
          if (bl[k][1] - tol <= t && t <= bl[k][2] + tol)
            return ranks[ri].id + ' idle gap ' + fmtUs(bl[k][2] - bl[k][1]) + '\nsegment ' + bl[k][3] + '\nevidence ' + bl[k][4];
        return null;
      }
      const ln = blk.lanes.find((o) => y >= o.y && y < o.y + laneH);
      if (!ln) return null;
      const L = lanesOf[ri][ln.lane];
      let i = lowerBound(L.s, t - L.maxDur - tol);
      for (; i < L.s.length && L.s[i] <= t + tol; i++) {
        if (L.e[i] + tol >= t) {
          const k = L.idx[i], ev = ranks[ri].ev;
          return S[ev.cells[KC.name][k]] + '\n' + D.lanes[ln.lane] + ' · rank ' + ranks[ri].id + ' · row ' + ev.row[k] +
            '\nstart ' + fmtUs(ev.s[k]) + ' · duration ' + fmtUs(ev.d[k]);
        }
      }
      return ranks[ri].id + ' · ' + D.lanes[ln.lane] + ' · busy ' + (() => {
        const h = ranks[ri].hist[ln.lane]; const b = Math.floor(t / binUs);
        return h && b >= 0 && b < h.length ? (h[b] / 10).toFixed(1) + ' % of ' + fmtUs(binUs) : '–';
      })();
    }
    return null;
  }
  $('tl-reset').addEventListener('click', () => setView(0, span));
  $('tl-in').addEventListener('click', () => zoomAt(GUTTER + plotW() / 2, 0.5));
  $('tl-out').addEventListener('click', () => zoomAt(GUTTER + plotW() / 2, 2));
  $('tl-step').addEventListener('click', () => { if (selected) setView(selected.s - (selected.e - selected.s) * 0.05, selected.e + (selected.e - selected.s) * 0.05); });
  (function legend() {
    const box = $('tl-legend');
    D.lanes.forEach((n, l) => {
      const it = el('span', null, 'legend-item'); const sw = el('span', null, 'swatch');
      sw.style.background = LANE_COLORS[l]; it.appendChild(sw); it.appendChild(document.createTextNode(n)); box.appendChild(it);
    });
    const it = el('span', null, 'legend-item'); const sw = el('span', null, 'swatch');
    sw.style.background = '#e07b1f'; it.appendChild(sw); it.appendChild(document.createTextNode('idle gap')); box.appendChild(it);
  })();
  function zoomToSegment(si) {
    const row = steps[si]; const s = num(row[SC.start_us]), e = num(row[SC.end_us]);
    if (!isNaN(s) && !isNaN(e)) setView(s - (e - s) * 0.05, e + (e - s) * 0.05);
    $('tl').scrollIntoView({block: 'nearest'});
  }

  // ---- L2: Single-step Inspector --------------------------------------------------------------
  const rankSelect = $('rank-select');
  ranks.forEach((r, i) => { const o = el('option', r.id); o.value = String(i); rankSelect.appendChild(o); });
  rankSelect.addEventListener('change', () => selectRank(Number(rankSelect.value)));
  let curRank = -1, curSeg = -1;
  const MAX_STEP_BUTTONS = 600;
  function selectRank(ri) {
    if (ri < 0 || ri >= ranks.length) return;
    curRank = ri; rankSelect.value = String(ri);
    const list = stepsOfRank[ri], box = $('step-list');
    box.replaceChildren();
    list.slice(0, MAX_STEP_BUTTONS).forEach((si, k) => {
      const row = steps[si];
      const label = row[SC.segment_type] === 'step' ? '#' + (k + 1) : row[SC.segment_type] + ' ' + (k + 1);
      const b = el('button', label, embeddedSeg.has(row[SC.segment_id]) ? 'embedded' : '');
      b.type = 'button';
      b.title = 'wall ' + ms(row[SC.wall_ms]) + (embeddedSeg.has(row[SC.segment_id]) ? ' · kernels embedded' : '');
      b.dataset.seg = String(si);
      b.addEventListener('click', () => selectSegment(si));
      box.appendChild(b);
    });
    $('step-count').textContent = list.length + ' segments' + (list.length > MAX_STEP_BUTTONS ? ' (first ' + MAX_STEP_BUTTONS + ' listed; use the heat map for the rest)' : '') + ' · blue border: kernels embedded';
    if (list.length && (curSeg < 0 || steps[curSeg][SC.rank_id] !== ranks[ri].id)) selectSegment(list[0]);
  }
  function tableInto(tbl, header, rows, onClick) {
    tbl.replaceChildren();
    const tr = el('tr'); header.forEach((h) => tr.appendChild(el('th', h))); tbl.appendChild(tr);
    rows.forEach((r) => {
      const row = el('tr', null, onClick ? 'clickable' : '');
      r.cells.forEach((c) => row.appendChild(el('td', c)));
      if (onClick) row.addEventListener('click', () => { Array.from(tbl.querySelectorAll('tr.active')).forEach((x) => x.classList.remove('active')); row.classList.add('active'); onClick(r.key); });
      tbl.appendChild(row);
    });
  }
  function selectSegment(si) {
    const row = steps[si]; if (!row) return;
    const ri = rankOf[row[SC.rank_id]];
    if (ri !== curRank) { curSeg = si; selectRank(ri); }
    curSeg = si;
    Array.from($('step-list').children).forEach((b) => b.classList.toggle('active', b.dataset.seg === String(si)));
    const seg = row[SC.segment_id], k = stepsOfRank[ri].indexOf(si);
    const declared = row[SC.declared_step];
    $('inspector-title').textContent = 'Rank ' + ranks[ri].id + ' · ' + row[SC.segment_type] + ' ' + (k + 1) + ' of ' +
      stepsOfRank[ri].length + (declared !== '' && declared !== undefined ? ' · declared step ' + declared : '') + ' · ' + seg;
    // anatomy bar
    const a = anatomyOf(seg), box = $('anatomy');
    box.replaceChildren();
    const parts = a ? [['seg-head', 'head', a[AC.head_wall_ms]], ['seg-main', 'main', a[AC.main_wall_ms]], ['seg-tail', 'tail', a[AC.tail_wall_ms]]] : [];
    const tot = parts.reduce((s, p) => s + (num(p[2]) || 0), 0);
    parts.forEach((p) => { const s = el('span', null, p[0]); s.style.width = (tot > 0 ? 100 * (num(p[2]) || 0) / tot : 0) + '%'; s.title = p[1] + ' ' + ms(p[2]); box.appendChild(s); });
    if (a) { const o = el('span', null, 'bubble-overlay'); o.style.width = (100 * (num(a[AC.bubble_ratio]) || 0)).toFixed(2) + '%'; o.title = 'bubble ' + pct(a[AC.bubble_ratio]); box.appendChild(o); }
    $('anatomy-legend').textContent = a ? 'head ' + ms(a[AC.head_wall_ms]) + ' · main ' + ms(a[AC.main_wall_ms]) + ' · tail ' +
      ms(a[AC.tail_wall_ms]) + ' · bubble ' + ms(a[AC.step_bubble_ms]) + ' (' + pct(a[AC.bubble_ratio]) + ' of wall, red strip) · ' + a[AC.anatomy_kind] : 'no anatomy row for this segment';
    const kv = [
      ['wall', ms(row[SC.wall_ms])], ['busy (union)', ms(row[SC.busy_union_ms])], ['kernel sum', ms(row[SC.kernel_sum_ms])],
      ['underfeed', ms(row[SC.underfeed_ms]) + ' (' + pct(row[SC.underfeed_ratio]) + ')'],
      ['internal bubbles', ms(row[SC.internal_bubble_total_ms]) + ' in ' + row[SC.bubble_count] + ' gaps, largest ' + ms(row[SC.largest_internal_bubble_ms])],
      ['layers', row[SC.main_layer_count] + ' main + ' + row[SC.speculative_layer_count] + ' speculative'],
      ['family / phase', row[SC.step_family] + ' / ' + row[SC.phase]], ['step class', row[SC.step_class_id]],
      ['anomaly tags', row[SC.anomaly_tags]], ['kernel rows', row[SC.row_start] + ' – ' + row[SC.row_end] + ' (' + row[SC.event_count] + ' kernels)'],
      ['in this page', embeddedSeg.has(seg) ? 'kernels embedded (timeline detail and operator cards)' : 'summary only (kernels beyond the page budget)']];
    tableInto($('step-stats'), ['field', 'value'], kv.map((p) => ({cells: p})));
    // layers and blocks
    const lrows = (layersOfSeg[seg] || []).map((i) => {
      const r = D.layers.rows[i];
      return {key: i, cells: [r[LC.layer_index], r[LC.layer_role], r[LC.row_start] + '–' + r[LC.row_end], ms(r[LC.wall_ms]), ms(r[LC.busy_union_ms]), pct(r[LC.underfeed_ratio]), ms(r[LC.largest_internal_bubble_ms]), r[LC.block_kinds]]};
    });
    const none = [{cells: ['–', 'none in this page (size budget) or none in the segment']}];
    tableInto($('layers'), ['#', 'role', 'rows', 'wall', 'busy', 'underfeed', 'largest gap', 'blocks'], lrows.length ? lrows : none, lrows.length ? (i) => showOps('layer', i) : null);
    const brows = (blocksOfSeg[seg] || []).map((i) => {
      const r = D.blocks.rows[i];
      const li = D.layers.rows.length ? r[BC.layer_id] : '';
      return {key: i, cells: [r[BC.block_index], r[BC.block_kind], r[BC.row_start] + '–' + r[BC.row_end], ms(r[BC.wall_ms]), r[BC.dominant_op_type], r[BC.bound_family], r[BC.dominant_core], pct(r[BC.comm_share]), li]};
    });
    tableInto($('blocks'), ['#', 'kind', 'rows', 'wall', 'op type', 'bound family', 'core', 'comm', 'layer'], brows.length ? brows : none, brows.length ? (i) => showOps('block', i) : null);
    selected = {ri: ri, s: num(row[SC.start_us]), e: num(row[SC.end_us])};
    schedule();
    if (lrows.length) showOps('layer', lrows[0].key);
    else showRows(ri, num(row[SC.row_start]), num(row[SC.row_end]), 'Segment ' + seg);
  }

  // ---- L3: operator cards ---------------------------------------------------------------------
  const MAX_CARDS = 80;
  function showOps(kind, i) {
    const t = kind === 'layer' ? D.layers : D.blocks, cm = kind === 'layer' ? LC : BC;
    const r = t.rows[i];
    const ri = rankOf[r[cm.rank_id]];
    const title = kind === 'layer' ? 'Layer ' + r[LC.layer_index] + ' (' + r[LC.layer_role] + ')' : 'Block ' + r[BC.block_index] + ' (' + r[BC.block_kind] + ', ' + r[BC.bound_family] + ')';
    showRows(ri, num(r[cm.row_start]), num(r[cm.row_end]), title + ' of rank ' + r[cm.rank_id] + ' · ' + ms(r[cm.wall_ms]));
  }
  function showRows(ri, a, b, title) {
    $('l3-title').textContent = title + ' · kernel rows ' + a + '–' + b;
    const box = $('op-cards'); box.replaceChildren();
    const ev = ranks[ri] ? ranks[ri].ev : null;
    if (!ev || isNaN(a) || isNaN(b)) { $('l3-note').textContent = 'no kernel rows'; return; }
    const i0 = lowerBound(ev.row, a);
    let n = 0; for (let i = i0; i < ev.row.length && ev.row[i] <= b; i++) n++;
    const want = b - a + 1;
    $('l3-note').textContent = n === 0 ? 'The kernels of these rows are not embedded in this page (budget ' + D.meta.event_budget +
      ' kernels); see raw_kernel_index.csv, rank ' + ranks[ri].id + ', rows ' + a + '–' + b + '.'
      : 'Showing ' + Math.min(n, MAX_CARDS) + ' of ' + want + ' kernels (fields of the source kernel row).';
    for (let i = i0, k = 0; i < ev.row.length && ev.row[i] <= b && k < MAX_CARDS; i++, k++) box.appendChild(card(ri, i));
  }
  function card(ri, i) {
    const r = ranks[ri], ev = r.ev;
    const c = el('div', null, 'card');
    c.appendChild(el('h4', S[ev.cells[KC.name][i]]));
    const dl = el('dl');
    const add = (k, v) => { dl.appendChild(el('dt', k)); dl.appendChild(el('dd', v === '' || v === undefined || v === null ? '–' : v)); };
    add('rank_id', r.id); add('row_idx', ev.row[i]);
    add('start', fmtUs(ev.s[i]) + ' (corrected, from capture start)'); add('duration_us', ev.d[i]);
    (D.kernel_cols || []).forEach((col, k) => {
      let v = D.kernel_numeric && D.kernel_numeric[k] ? ev.cells[k][i] : S[ev.cells[k][i]];  // µs columns are numbers
      if (col === 'event_id' && v === '' && r.evt_prefix) v = r.evt_prefix + ev.row[i];
      add(col, v);
    });
    add('lane', D.lanes[ev.lane[i]]);
    const op = ev.op[i] >= 0 ? D.ops[ev.op[i]] : null;
    if (op) { add('op_type', op[0]); add('bound_family', op[1]); add('dominant_core', op[2]); }
    c.appendChild(dl);
    return c;
  }

  // ---- operator deep dive ---------------------------------------------------------------------
  (function deepDive() {
    const DD = D.deep_dive;
    const tbl = $('dd-table'), cardBox = $('dd-card'), scopeSel = $('dd-scope');
    if (!DD || !Array.isArray(DD.rows)) {
      $('dd-chip').textContent = 'Not available: this output folder has no operator_deep_dive.json.';
      $('dd-host-note').textContent = 'not available';
      return;
    }
    const chip = DD.chip || {};
    const sel = DD.selection || {};
    $('dd-chip').textContent = 'Chip ' + (chip.name || 'unknown') + ' (' + (chip.assumed === true ? 'assumed, not detected' :
      chip.assumed === false ? 'detected' : 'not stated') + (chip.source ? '; source: ' + chip.source : '') + ') · ' +
      (chip.cube_cores !== undefined ? chip.cube_cores + ' cube cores, ' + chip.vector_cores + ' vector cores · ' : '') +
      'peaks ' + chip.cube_tflops + ' TFLOPS cube, ' + chip.hbm_gbps + ' GB/s HBM' +
      (sel.coverage !== undefined ? ' · hot set: smallest prefix reaching ' + sel.coverage + ' of kernel time, ' +
        sel.min_operators + '–' + sel.max_operators + ' operators' : '');
    const rows = DD.rows.filter((r) => r && typeof r === 'object');
    const scopes = [['root', 'root (all ranks merged)']];
    const seenRank = new Set();
    rows.forEach((r) => { if (r.scope === 'rank' && !seenRank.has(r.rank_id)) { seenRank.add(r.rank_id); scopes.push(['rank:' + r.rank_id, r.rank_id]); } });
    scopes.forEach(([v, label]) => { const o = el('option', label); o.value = v; scopeSel.appendChild(o); });
    function usText(v) { v = num(v); return isNaN(v) ? '–' : fmtUs(v); }
    function fixed(v, d) { v = num(v); return isNaN(v) ? '–' : v.toFixed(d); }
    function list(v) { return Array.isArray(v) ? v.join(', ') : (v === null || v === undefined ? '' : String(v)); }
    function sevRank(s) { const i = SEVERITIES.indexOf(s); return i < 0 ? 9 : i; }
    // [header, value for display, sort key]
    const COLS = [
      ['#', (r) => r.hot_rank, (r) => num(r.hot_rank)],
      ['name', (r) => r.name, (r) => String(r.name)],
      ['task type', (r) => r.task_type, (r) => String(r.task_type)],
      ['shapes', (r) => { const s = r.input_shapes || r.shape_class || ''; return s.length > 40 ? s.slice(0, 40) + '…' : s; }, (r) => String(r.input_shapes || r.shape_class || '')],
      ['calls', (r) => r.call_count, (r) => num(r.call_count)],
      ['total ms', (r) => fixed(num(r.total_us) / 1000, 3), (r) => num(r.total_us)],
      ['share', (r) => pct(r.kernel_time_share), (r) => num(r.kernel_time_share)],
      ['avg us', (r) => fixed(r.avg_us, 2), (r) => num(r.avg_us)],
      ['efficiency', (r) => pct(r.efficiency), (r) => num(r.efficiency)],
      ['bound', (r) => r.bound_family, (r) => String(r.bound_family)],
      ['severity', (r) => r.severity || '', (r) => -sevRank(r.severity)],
      ['classifications', (r) => list(r.classifications), (r) => list(r.classifications)],
    ];
    const DESC = new Set([4, 5, 6, 7, 8, 10]);  // numbers and severity: largest first on the first click
    let sortCol = 0, sortDir = 1, current = [];
    function cmp(a, b) {
      const x = COLS[sortCol][2](a), y = COLS[sortCol][2](b);
      const xn = typeof x === 'number' && isNaN(x), yn = typeof y === 'number' && isNaN(y);
      if (xn || yn) return xn === yn ? 0 : (xn ? 1 : -1);  // missing values last
      return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
    }
    function render() {
      const scope = scopeSel.value;
      current = rows.filter((r) => scope === 'root' ? r.scope !== 'rank' : r.scope === 'rank' && 'rank:' + r.rank_id === scope);
      current.sort((a, b) => cmp(a, b) || num(a.hot_rank) - num(b.hot_rank));
      tbl.replaceChildren();
      const head = el('tr');
      COLS.forEach((c, i) => {
        const th = el('th', c[0] + (i === sortCol ? (sortDir > 0 ? ' ▲' : ' ▼') : ''), 'sortable');
        th.addEventListener('click', () => { sortDir = i === sortCol ? -sortDir : (DESC.has(i) ? -1 : 1); sortCol = i; render(); });
        head.appendChild(th);
      });
      tbl.appendChild(head);
      current.forEach((r, k) => {
        const tr = el('tr', null, 'clickable');
        tr.dataset.k = String(k);
        COLS.forEach((c, i) => {
          const td = el('td', c[1](r));
          if (i === 10 && r.severity) { td.textContent = ''; td.appendChild(el('span', r.severity, severityClass(r.severity))); }
          tr.appendChild(td);
        });
        tr.addEventListener('click', () => {
          Array.from(tbl.querySelectorAll('tr.active')).forEach((x) => x.classList.remove('active'));
          tr.classList.add('active');
          showCard(r);
        });
        tbl.appendChild(tr);
      });
      const c = DD.counts || {};
      $('dd-count').textContent = current.length + ' operators' + (scope === 'root' ? '' : ' (this page holds each rank\'s first ' +
        'rows: ' + c.rank_rows_embedded + ' of ' + c.rank_rows + ' rank rows; all in operator_deep_dive.csv)');
    }
    const SHOWN = new Set(['details', 'classifications', 'evidence_ids', 'gaps', 'verdict', 'name']);
    function showCard(r) {
      cardBox.replaceChildren();
      const c = el('div', null, 'card dd-card-open');
      c.appendChild(el('h4', '#' + r.hot_rank + ' ' + r.name + ' (' + r.task_type + (r.scope === 'rank' ? ', rank ' + r.rank_id : '') + ')'));
      const top = el('div');
      if (r.severity) top.appendChild(el('span', r.severity, severityClass(r.severity)));
      top.appendChild(el('span', r.verdict || 'no pathology found', 'ftype'));
      c.appendChild(top);
      (Array.isArray(r.details) ? r.details : []).forEach((d) => {
        const box = el('div', null, 'dd-detail');
        box.appendChild(el('h5', (d.title || d.id) + (d.severity ? ' · ' + d.severity : '') + (d.id ? ' · ' + d.id : '')));
        const dl = el('dl');
        const add = (k, v) => { if (v === undefined || v === null || v === '') return; dl.appendChild(el('dt', k)); dl.appendChild(el('dd', v)); };
        if (Array.isArray(d.facts) && d.facts.length) {
          dl.appendChild(el('dt', 'Facts'));
          const dd = el('dd'); const ul = el('ul', null, 'dd-facts');
          d.facts.forEach((f) => ul.appendChild(el('li', f)));
          dd.appendChild(ul); dl.appendChild(dd);
        }
        add('Inference', d.inference); add('Likely cause', d.cause); add('Suggested change', d.suggestion);
        box.appendChild(dl);
        c.appendChild(box);
      });
      const dl = el('dl');
      const add = (k, v) => { dl.appendChild(el('dt', k)); dl.appendChild(el('dd', v === '' || v === undefined || v === null ? '–' : v)); };
      add('classifications', list(r.classifications) || 'none');
      add('evidence ids', list(r.evidence_ids) || 'none');
      add('gaps', list(r.gaps) || 'none');
      // every measured value the row has (missing ones are left out)
      Object.keys(r).forEach((k) => {
        const v = r[k];
        if (SHOWN.has(k) || v === null || v === undefined || v === '' || typeof v === 'object') return;
        add(k, v);
      });
      c.appendChild(dl);
      cardBox.appendChild(c);
    }
    scopeSel.addEventListener('change', () => { cardBox.replaceChildren(); render(); });
    render();
    // host API overhead
    const host = Array.isArray(DD.host_api) ? DD.host_api : [];
    const hc = DD.counts || {};
    $('dd-host-note').textContent = host.length ? (hc.host_api > host.length ? 'first ' + host.length + ' of ' + hc.host_api + ' entries' : host.length + ' entries') : 'no host API entries';
    tableInto($('dd-host'), ['rank', 'level', 'api', 'time', 'count', 'avg', 'share of span', 'classification'],
      host.map((h) => ({cells: [h.rank_id, h.level, h.api, usText(h.time_us), h.count, usText(h.avg_us), pct(h.share_of_span), h.classification || '']})));
  })();
)JS";

// The page's start, after every part of the script (the MoE part included) has set itself up.
const char* const kHtmlJsStart = R"JS(
  // ---- start ----------------------------------------------------------------------------------
  window.addEventListener('resize', resize);
  resize();
  if (ranks.length) selectRank(0);
  document.body.dataset.ready = '1';
})();
)JS";

// The in-kernel MoE part (issue 20): added to the page only when the root has MoE traces, so the
// page of a root without them is byte for byte what it was. The JS runs inside the page's script
// (between kHtmlJs and kHtmlJsStart), so it reaches the timeline's state and extends it by wrapping
// its layout, draw and hover functions instead of adding hooks every page would carry.
const char* const kHtmlMoeCss = R"CSS(
#moe-calls td.detail{white-space:normal;min-width:260px}
#moe-calls button,#moe-worst tr.clickable{font-size:12px}
#moe-findings{padding-left:22px;margin:4px 0}#moe-findings li{margin:4px 0;cursor:pointer}
#moe-findings li:hover{background:#f0f4f9}
)CSS";

const char* const kHtmlMoeJs = R"JS(
  // ---- in-kernel MoE: section and nested timeline lanes ----------------------------------------
  const MOE = D.moe;
  const MOE_ROLES = ['container', 'token_wait', 'combine_wait', 'sync_wait', 'compute', 'work'];
  const MOE_COLORS = {container: '#d3dae3', token_wait: '#e0a030', combine_wait: '#d1382a', sync_wait: '#8a4fb8',
    compute: '#2f6fb3', work: '#2e9d6a'};
  const MOE_HEAD_H = 14, MOE_CORE_H = 5, MOE_GAP = 3;
  function fx(v, d) { v = num(v); return isNaN(v) ? '–' : v.toFixed(d); }
  function moeColor(role) { return MOE_COLORS[role] || MOE_COLORS.work; }
  // A call's intervals come flat as [core, label, index, start, end] per interval, µs from the
  // kernel row's start. Per core two lists: containers are drawn first so the phases inside them
  // stay visible. Rows under the call's head row: one per core, a small gap between core groups.
  function moePrepare(c) {
    const nCores = c.cores.length / 2, perCore = [];
    for (let k = 0; k < nCores; k++) perCore.push({outer: [], inner: []});
    for (let i = 0; i + 4 < c.iv.length; i += 5) {
      const p = perCore[c.iv[i]];
      if (p) (c.roles[c.iv[i + 1]] === 'container' ? p.outer : p.inner).push(i);
    }
    const rows = [];
    let dy = MOE_HEAD_H, prev = -1;
    for (let k = 0; k < nCores; k++) {
      const type = c.cores[2 * k];
      if (prev >= 0 && type !== prev) dy += MOE_GAP;
      rows.push({core: k, dy: dy, first: type !== prev});
      prev = type; dy += MOE_CORE_H;
    }
    return {c: c, ri: rankOf[c.rank], cores: perCore, rows: rows, height: dy + 4};
  }
  const moeCalls = (MOE.lanes || []).map(moePrepare);
  const moeOpen = [];  // indexes into moeCalls, in the order they were opened
  const moeByEvent = {};
  moeCalls.forEach((m, k) => { moeByEvent[m.c.rank + '\u001f' + m.c.event_id] = k; });
  function moeGroup(c, core) { const t = c.cores[2 * core]; return c.groups[t] !== undefined ? c.groups[t] : 'type' + t; }

  // Layout: the base lanes, then each opened call of a rank as extra rows above its bubble axis;
  // everything below moves down.
  const baseLayout = computeLayout;
  computeLayout = function () {
    baseLayout();
    let shift = 0;
    layout.forEach((blk, ri) => {
      if (shift) { blk.top += shift; blk.lanes.forEach((ln) => { ln.y += shift; }); blk.bubbleY += shift; blk.bottom += shift; }
      blk.moe = [];
      let y = blk.bubbleY;
      moeOpen.forEach((k) => { if (moeCalls[k].ri === ri) { blk.moe.push({k: k, y: y}); y += moeCalls[k].height; } });
      const add = y - blk.bubbleY;
      blk.bubbleY += add; blk.bottom += add; shift += add;
    });
    totalH += shift;
  };

  function drawMoeCall(m, y) {
    const c = m.c, k = plotW() / (view.e - view.s);
    const x0 = xOf(c.s), x1 = xOf(c.s + c.d);
    ctx.fillStyle = '#eef1f5'; ctx.fillRect(GUTTER, y, canvasW - GUTTER, MOE_HEAD_H - 3);
    ctx.fillStyle = '#1f3550'; ctx.fillRect(x0, y + 2, Math.max(1, x1 - x0), MOE_HEAD_H - 7);
    if (x1 - x0 > 80) {
      ctx.fillStyle = '#fff'; ctx.font = '9px sans-serif'; ctx.textBaseline = 'middle';
      ctx.fillText(c.kernel + ' · ' + c.event_id, Math.max(x0, GUTTER) + 3, y + MOE_HEAD_H / 2 - 1, Math.max(10, Math.min(x1, canvasW) - Math.max(x0, GUTTER) - 6));
    }
    const rect = (i, yy) => {
      const a = GUTTER + (c.s + c.iv[i + 3] - view.s) * k, b = GUTTER + (c.s + c.iv[i + 4] - view.s) * k;
      if (b < GUTTER || a > canvasW) return;
      ctx.fillRect(a, yy, Math.max(1, b - a), MOE_CORE_H - 1);
    };
    m.rows.forEach((row) => {
      const yy = y + row.dy, p = m.cores[row.core];
      ctx.fillStyle = MOE_COLORS.container;
      p.outer.forEach((i) => rect(i, yy));
      p.inner.forEach((i) => { ctx.fillStyle = moeColor(c.roles[c.iv[i + 1]]); rect(i, yy); });
    });
    return m.rows.length;
  }
  const baseDraw = draw;
  draw = function () {
    baseDraw();
    let rows = 0;
    ctx.save(); ctx.beginPath(); ctx.rect(GUTTER, 0, canvasW - GUTTER, totalH); ctx.clip();
    layout.forEach((blk) => (blk.moe || []).forEach((o) => { rows += drawMoeCall(moeCalls[o.k], o.y); }));
    ctx.restore();
    // gutter labels of the opened calls: the kernel row, then each core group at its first core
    ctx.textBaseline = 'middle'; ctx.textAlign = 'right';
    layout.forEach((blk) => (blk.moe || []).forEach((o) => {
      const m = moeCalls[o.k];
      ctx.fillStyle = '#1f3550'; ctx.font = 'bold 9px sans-serif';
      ctx.fillText('MoE ' + m.c.event_id + ' ✕', GUTTER - 6, o.y + MOE_HEAD_H / 2 - 1, GUTTER - 10);
      ctx.fillStyle = '#66707c'; ctx.font = '9px sans-serif';
      m.rows.forEach((row) => {
        if (!row.first) return;
        const n = m.rows.filter((r) => m.c.cores[2 * r.core] === m.c.cores[2 * row.core]).length;
        ctx.fillText(moeGroup(m.c, row.core) + ' ×' + n, GUTTER - 6, o.y + row.dy + 4, GUTTER - 10);
      });
    }));
    ctx.textAlign = 'left';
    // lane counts and where the last opened call's first core row is, for a reader (or a test) of the page
    const base = layout.reduce((a, blk) => a + blk.lanes.length, 0);
    cv.dataset.lanes = String(base + rows);
    cv.dataset.moeOpen = String(moeOpen.length);
    const lastK = moeOpen[moeOpen.length - 1];
    const last = layout.reduce((f, blk) => f || (blk.moe || []).find((o) => o.k === lastK), undefined);
    cv.dataset.moeRowY = last && moeCalls[last.k].rows.length ? String(last.y + moeCalls[last.k].rows[0].dy + 2) : '';
  };

  // What is under (x, y) among the opened calls' rows: {k, head} or {k, row}.
  function moeAt(x, y) {
    for (const blk of layout) {
      if (y < blk.top || y > blk.bottom) continue;
      for (const o of (blk.moe || [])) {
        const m = moeCalls[o.k];
        if (y < o.y || y >= o.y + m.height) continue;
        if (y < o.y + MOE_HEAD_H) return {k: o.k, head: true};
        const row = m.rows.find((r) => y >= o.y + r.dy && y < o.y + r.dy + MOE_CORE_H);
        return row ? {k: o.k, row: row} : {k: o.k};
      }
    }
    return null;
  }
  function moeText(hit, t) {
    const m = moeCalls[hit.k], c = m.c;
    if (hit.head) return c.kernel + '\nrank ' + c.rank + ' · call ' + c.call + ' · kernel row ' + c.event_id +
      '\nkernel ' + fmtUs(c.d) + ' · trace span ' + fmtUs(c.span) + '\ncores placed at ' +
      (c.t0_aligned ? 'the row start + their T0' : 'the row start (their T0 unknown)') + ' · click to close';
    if (!hit.row) return null;
    const p = m.cores[hit.row.core], rel = t - c.s, tol = (view.e - view.s) / plotW() * 2;
    const covers = (i) => c.iv[i + 3] - tol <= rel && rel <= c.iv[i + 4] + tol;
    const shortest = (list) => list.filter(covers).sort((a, b) => (c.iv[a + 4] - c.iv[a + 3]) - (c.iv[b + 4] - c.iv[b + 3]))[0];
    const i = shortest(p.inner) !== undefined ? shortest(p.inner) : shortest(p.outer);
    const where = moeGroup(c, hit.row.core) + ' core ' + c.cores[2 * hit.row.core + 1] + ' · rank ' + c.rank;
    if (i === undefined) return where + '\n(no phase here)';
    const inside = p.outer.filter((j) => j !== i && covers(j)).map((j) => c.labels[c.iv[j + 1]]);
    return c.labels[c.iv[i + 1]] + ' · index ' + c.iv[i + 2] + '\n' + c.roles[c.iv[i + 1]] + ' · ' + where +
      '\nduration ' + fmtUs(c.iv[i + 4] - c.iv[i + 3]) + ' · ' + fmtUs(c.iv[i + 3]) + ' – ' + fmtUs(c.iv[i + 4]) +
      ' into the kernel' + (inside.length ? '\ninside ' + inside.join(' › ') : '');
  }
  const baseHover = hoverText;
  hoverText = function (x, y) {
    const hit = x >= GUTTER ? moeAt(x, y) : null;
    if (hit) return moeText(hit, tOf(x));
    const text = baseHover(x, y);
    const k = text && x >= GUTTER ? moeKernelAt(x, y) : -1;
    return k < 0 ? text : text + '\nclick: ' + (moeOpen.indexOf(k) >= 0 ? 'close' : 'open') + ' its in-kernel MoE lanes';
  };

  // Opening a call adds its rows under its rank and zooms to its kernel; closing removes them. At
  // most MOE_MAX_OPEN calls are open (the earliest opened closes): each adds ~400 px to a canvas
  // whose height browsers cap.
  const MOE_MAX_OPEN = 8;
  function moeToggle(k, scroll) {
    const at = moeOpen.indexOf(k);
    if (at >= 0) moeOpen.splice(at, 1);
    else if (moeCalls[k] && moeCalls[k].ri !== undefined) moeOpen.push(k);
    else return;
    if (moeOpen.length > MOE_MAX_OPEN) moeOpen.shift();
    resize();
    if (at < 0) {
      const c = moeCalls[k].c, pad = c.d * 0.08 + 0.5;
      setView(c.s - pad, c.s + c.d + pad);
      if (scroll) $('tl').scrollIntoView({block: 'start'});
    }
    moeButtons();
  }
  // A click (not a drag) on a traced kernel in the timeline, or on an opened call's head row.
  function moeKernelAt(x, y) {
    const t = tOf(x), tol = (view.e - view.s) / plotW() * 2;
    for (let ri = 0; ri < layout.length; ri++) {
      const blk = layout[ri], ln = blk.lanes.find((o) => y >= o.y && y < o.y + laneH);
      if (!ln) continue;
      const L = lanesOf[ri][ln.lane], r = ranks[ri];
      for (let i = lowerBound(L.s, t - L.maxDur - tol); i < L.s.length && L.s[i] <= t + tol; i++) {
        if (L.e[i] + tol < t) continue;
        const e = L.idx[i], col = KC.event_id;
        let id = col === undefined ? '' : S[r.ev.cells[col][e]];
        if (!id && r.evt_prefix) id = r.evt_prefix + r.ev.row[e];
        const k = moeByEvent[r.id + '\u001f' + id];
        if (k !== undefined) return k;
      }
    }
    return -1;
  }
  let moeDown = null;
  cv.addEventListener('mousedown', (ev) => { moeDown = [ev.clientX, ev.clientY]; });
  cv.addEventListener('click', (ev) => {
    if (!moeDown || Math.abs(ev.clientX - moeDown[0]) + Math.abs(ev.clientY - moeDown[1]) > 4) return;
    const b = cv.getBoundingClientRect(), x = ev.clientX - b.left, y = ev.clientY - b.top;
    if (x < GUTTER) return;
    const hit = moeAt(x, y);
    const k = hit ? (hit.head ? hit.k : -1) : moeKernelAt(x, y);
    if (k >= 0) moeToggle(k, false);
  });

  // ---- the section ----
  function moeLegend(box) {
    MOE_ROLES.forEach((r) => {
      const it = el('span', null, 'legend-item'), sw = el('span', null, 'swatch');
      sw.style.background = MOE_COLORS[r]; it.appendChild(sw); it.appendChild(document.createTextNode('MoE ' + r)); box.appendChild(it);
    });
  }
  moeLegend($('moe-legend'));
  moeLegend($('tl-legend'));
  const moeButtonList = [];
  function moeButtons() {
    moeButtonList.forEach(([b, k]) => {
      const open = moeOpen.indexOf(k) >= 0;
      b.textContent = open ? 'close lanes' : 'open lanes';
      b.classList.toggle('active', open);
    });
  }
  (function moeSection() {
    const calls = MOE.calls || {cols: [], rows: []}, cc = colmap(calls);
    const capped = moeCalls.length < MOE.attached;
    $('moe-note').textContent = MOE.calls_total + ' traced calls, ' + MOE.attached + ' attached to their kernel rows' +
      (calls.rows.length < MOE.calls_total ? ' (the table lists the first ' + calls.rows.length + ')' : '') + '. ' +
      (capped ? 'Nested lanes are embedded for the first ' + moeCalls.length + ' of ' + MOE.attached +
        ' attached calls (the page stays bounded); report/timeline.json holds every call.'
        : 'Every attached call can be opened as nested lanes (one row per core) under its rank in the timeline.');
    $('moe-cap').textContent = capped ? 'capped: lanes of ' + moeCalls.length + ' of ' + MOE.attached + ' attached calls' : '';
    const tbl = $('moe-calls');
    const head = el('tr');
    ['rank', 'call', 'variant', 'status', 'kernel row', 'kernel', 'kernel µs', 'span µs', 'span / kernel', 'cores', 'detail', 'lanes']
      .forEach((h) => head.appendChild(el('th', h)));
    tbl.appendChild(head);
    calls.rows.forEach((r) => {
      const tr = el('tr');
      tr.dataset.status = String(r[cc.status]);
      [r[cc.rank_id], r[cc.call], r[cc.variant], r[cc.status], r[cc.event_id], r[cc.kernel_name], fx(r[cc.kernel_duration_us], 3),
        fx(r[cc.span_us], 3), pct(r[cc.span_share_of_kernel]), r[cc.cores]].forEach((v) => tr.appendChild(el('td', v)));
      tr.appendChild(el('td', r[cc.detail], 'detail'));
      const td = el('td'), k = r[cc.lane];
      if (typeof k === 'number' && k >= 0 && moeCalls[k]) {
        const b = el('button', 'open lanes', 'moe-open');
        b.type = 'button';
        if (moeCalls[k].ri === undefined) { b.disabled = true; b.title = 'rank not in this page'; }
        b.addEventListener('click', () => moeToggle(k, true));
        moeButtonList.push([b, k]);
        td.appendChild(b);
      } else {
        td.textContent = r[cc.status] === 'attached' ? 'not embedded (page cap)' : '–';
      }
      tr.appendChild(td);
      tbl.appendChild(tr);
    });
    $('moe-close').addEventListener('click', () => { moeOpen.length = 0; resize(); moeButtons(); });
    // the call a row of another table names: its lanes, when embedded
    const callOf = (rank, call) => moeCalls.findIndex((m) => m.c.rank === rank && String(m.c.call) === String(call));
    const ph = MOE.phases || {cols: [], rows: []}, pc = colmap(ph);
    $('moe-phases-note').textContent = ph.rows.length < MOE.phases_total ? 'the ' + ph.rows.length + ' longest of ' + MOE.phases_total + ' phases' : ph.rows.length + ' phases';
    tableInto($('moe-phases'), ['call', 'phase', 'core group', 'role', 'ranks', 'union µs (median)', 'slowest core µs (median)',
      'slowest core µs (max)', 'slowest rank', 'max / median'],
      ph.rows.map((r) => ({cells: [r[pc.call], r[pc.label], r[pc.core_group], r[pc.role], r[pc.ranks], fx(r[pc.union_us_median], 3),
        fx(r[pc.max_core_us_median], 3), fx(r[pc.max_core_us_max], 3), r[pc.slowest_rank], fx(r[pc.slowest_to_median], 2)]})));
    const wc = MOE.worst || {cols: [], rows: []}, wm = colmap(wc);
    tableInto($('moe-worst'), ['rank', 'call', 'phase', 'core group', 'core', 'its µs', 'median core µs', 'evidence'],
      wc.rows.map((r) => ({key: callOf(r[wm.rank_id], r[wm.call]), cells: [r[wm.rank_id], r[wm.call],
        r[wm.label] + (r[wm.index] !== '' ? ' #' + r[wm.index] : ''), r[wm.core_group], r[wm.max_core_id], fx(r[wm.max_core_us], 3),
        fx(r[wm.median_core_us], 3), r[wm.evidence_id]]})),
      (k) => { if (k >= 0 && moeOpen.indexOf(k) < 0) moeToggle(k, true); });
    // the in-kernel findings; a click opens the lanes of the kernel row they cite (else the suspected rank's call)
    const ol = $('moe-findings');
    const mf = findings.filter((f) => String(f.finding_type).indexOf('moe_') === 0);
    if (!mf.length) ol.appendChild(el('li', 'no in-kernel findings'));
    mf.forEach((f) => {
      const li = el('li');
      li.appendChild(el('span', f.severity, severityClass(f.severity)));
      li.appendChild(el('span', f.finding_type, 'ftype'));
      li.appendChild(el('span', f.summary));
      li.appendChild(el('div', 'suspected ranks ' + (f.suspected_ranks || []).join(', ') + ' · ' + fx(f.magnitude_ms, 3) +
        ' ms at stake · confidence ' + f.confidence + ' · ' + (f.evidence_ids || []).length + ' evidence ids', 'fsub'));
      li.addEventListener('click', () => {
        let k = -1;
        (f.evidence_ids || []).forEach((id) => { if (k < 0) k = moeCalls.findIndex((m) => m.c.event_id === id); });
        if (k < 0) k = moeCalls.findIndex((m) => (f.suspected_ranks || []).indexOf(m.c.rank) >= 0);
        if (k >= 0 && moeOpen.indexOf(k) < 0) moeToggle(k, true);
      });
      ol.appendChild(li);
    });
  })();
)JS";

}  // namespace ascprof::report

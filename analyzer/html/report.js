/* report.js: draws the charts of xferprof's HTML report from the data the C
 * renderer embeds (<script type="application/json" id="xp-data">, documented
 * in analyzer/render_html.c) and makes tables sortable; used by the diff page
 * too (tables only).  Embedded into the page by embed.py: no network, no
 * libraries.  Every error is caught and written into #xp-errors, and
 * body[data-rendered="1"] is set when drawing is done, so that a headless
 * browser can tell a page that works from one that does not. */
(function () {
  'use strict';
  var T_START = performance.now();
  var SVGNS = 'http://www.w3.org/2000/svg';
  var DIRS = ['unknown', 'H2D', 'D2H', 'D2D', 'H2H'];
  var DIR_COLORS = ['#8d8d8d', '#1f77b4', '#e6550d', '#2ca02c', '#8e44ad'];
  var HOSTMEM = ['none', 'pageable', 'pinned', 'managed'];
  var BLOCKING = ['unknown', 'sync', 'async', 'async_pageable'];
  var LABEL_W = 200, RIGHT_PAD = 16;

  function fail(what) {
    var e = document.getElementById('xp-errors');
    if (e) e.textContent += what + '\n';
  }
  window.onerror = function (msg, src, line, col) {
    fail('script error: ' + msg + ' (line ' + line + ':' + col + ')');
  };

  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function svgText(parent, x, y, text, attrs) {
    var t = svg('text', attrs || {}, parent);
    t.setAttribute('x', x);
    t.setAttribute('y', y);
    t.textContent = text;
    return t;
  }
  function html(tag, cls, parent, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function fmtBytes(b) {
    if (!isFinite(b)) return '-';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i === 0 ? String(Math.round(b)) : b.toFixed(b < 10 ? 2 : 1)) + ' ' + u[i];
  }
  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (a < 1e3) return Math.round(ns) + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + ' \u00b5s';
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  function fmtGbps(g) { return g >= 100 ? g.toFixed(0) + ' GB/s' : g >= 1 ? g.toFixed(2) + ' GB/s' : g.toPrecision(2) + ' GB/s'; }

  /* Ticks at 1, 2, 5 x 10^k covering [lo, hi], about n of them. */
  function niceTicks(lo, hi, n) {
    var span = hi - lo;
    if (!(span > 0)) return { step: 1, ticks: [lo] };
    var raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    var step = (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag, ticks = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(v);
    return { step: step, ticks: ticks };
  }
  /* A time axis labels every tick in the one unit its step calls for. */
  function timeUnit(step) {
    if (step >= 1e9) return { div: 1e9, name: 's' };
    if (step >= 1e6) return { div: 1e6, name: 'ms' };
    if (step >= 1e3) return { div: 1e3, name: '\u00b5s' };
    return { div: 1, name: 'ns' };
  }
  function tickLabel(v, step, div) {
    var digits = Math.max(0, -Math.floor(Math.log10(step / div) + 1e-9));
    return (v / div).toFixed(Math.min(digits, 6));
  }
  function byteUnit(max) {
    var u = [[1, 'B'], [1024, 'KiB'], [1048576, 'MiB'], [1073741824, 'GiB'], [1099511627776, 'TiB']];
    var i = 0;
    while (i < u.length - 1 && max >= u[i + 1][0]) i++;
    return { div: u[i][0], name: u[i][1] };
  }

  /* Hatching for pageable memory, one pattern per direction color. */
  function defs(root) {
    var d = svg('defs', {}, root);
    DIR_COLORS.forEach(function (c, i) {
      var p = svg('pattern', { id: 'xp-hatch-' + i, width: 5, height: 5, patternUnits: 'userSpaceOnUse',
        patternTransform: 'rotate(45)' }, d);
      svg('rect', { width: 5, height: 5, fill: c, opacity: 0.35 }, p);
      svg('line', { x1: 0, y1: 0, x2: 0, y2: 5, stroke: c, 'stroke-width': 3 }, p);
    });
    return d;
  }
  function copyFill(dir, hm) {
    dir = dir >= 0 && dir < DIRS.length ? dir : 0;
    return hm === 1 ? 'url(#xp-hatch-' + dir + ')' : DIR_COLORS[dir];
  }

  /* The hover box: rows of [key, value], all as text (names come from the program). */
  var tip = null;
  function showTip(ev, title, rows) {
    if (!tip) tip = document.getElementById('xp-tip');
    if (!tip) return;
    tip.textContent = '';
    html('b', null, tip, title);
    var t = html('table', null, tip);
    rows.forEach(function (r) {
      if (r[1] === undefined || r[1] === null || r[1] === '') return;
      var tr = html('tr', null, t);
      html('td', null, tr, r[0]);
      html('td', null, tr, String(r[1]));
    });
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = ev.clientX - w - 10;
    if (y + h > window.innerHeight - 4) y = ev.clientY - h - 10;
    tip.style.left = Math.max(0, x) + 'px';
    tip.style.top = Math.max(0, y) + 'px';
  }
  function hideTip() { if (tip) tip.style.display = 'none'; }

  function legendSwatch(parent, label, draw) {
    var s = html('span', null, parent);
    var g = svg('svg', { width: 22, height: 12 }, s);
    draw(g);
    html('span', null, s, label);
  }

  function str(D, i) { return i >= 0 && i < D.strings.length ? D.strings[i] : ''; }

  /* ---------------------------------------------------------------- timeline */

  /* Copy rows: [t, dur, bytes, dir, hostmem, blocking, proc, stream, tid, api, site, status, more_n, more_bytes,
     status as named: a string, -1 for success] */
  var C_T = 0, C_DUR = 1, C_BYTES = 2, C_DIR = 3, C_HM = 4, C_BL = 5, C_PROC = 6, C_STREAM = 7,
    C_TID = 8, C_API = 9, C_SITE = 10, C_STATUS = 11, C_MORE_N = 12, C_MORE_B = 13, C_STATUS_NAME = 14;
  /* Sync rows: [t, dur, proc, tid, api, site, stream] ; NVTX rows: [t, dur, proc, tid, depth, name] */

  function isBlocking(c) { return c[C_BL] === 1 || c[C_BL] === 3; }

  function buildTracks(D) {
    var tracks = [];
    D.procs.forEach(function (p, pi) {
      var nvtxTids = {}, streams = {}, tids = {};
      D.nvtx.forEach(function (r) { if (r[2] === pi) nvtxTids[r[3]] = Math.max(nvtxTids[r[3]] || 0, r[4]); });
      D.copies.forEach(function (c) {
        if (c[C_PROC] !== pi) return;
        streams[c[C_STREAM]] = true;
        tids[c[C_TID]] = true;
      });
      D.syncs.forEach(function (s) { if (s[2] === pi) tids[s[3]] = true; });
      var any = Object.keys(nvtxTids).length + Object.keys(streams).length + Object.keys(tids).length;
      if (!any) return;
      tracks.push({ kind: 'proc', label: p.label || '(process ' + pi + ')', h: 20 });
      Object.keys(nvtxTids).map(Number).sort(function (a, b) { return a - b; }).forEach(function (tid) {
        var lanes = Math.min(nvtxTids[tid], 5) + 1;
        tracks.push({ kind: 'nvtx', proc: pi, tid: tid, label: 'NVTX, thread ' + tid, h: lanes * 15 + 4 });
      });
      Object.keys(streams).map(Number).sort(function (a, b) { return a - b; }).forEach(function (si) {
        var name = p.streams[si] || '?';
        tracks.push({ kind: 'stream', proc: pi, stream: si, h: 24,
          label: 'stream ' + name + (name === '0x0' ? ' (default)' : '') });
      });
      Object.keys(tids).map(Number).sort(function (a, b) { return a - b; }).forEach(function (tid) {
        tracks.push({ kind: 'thread', proc: pi, tid: tid, label: 'thread ' + tid + ' (host held)', h: 24 });
      });
    });
    var y = 34;
    tracks.forEach(function (t) { t.y = y; y += t.h + 2; });
    return { tracks: tracks, height: y + 8 };
  }

  function copyRows(D, c) {
    var p = D.procs[c[C_PROC]] || { streams: [] };
    var rows = [
      ['api', str(D, c[C_API])], ['bytes', fmtBytes(c[C_BYTES]) + ' (' + c[C_BYTES] + ')'],
      ['held the caller', fmtNs(c[C_DUR])], ['host memory', HOSTMEM[c[C_HM]] || '?'],
      ['blocking', BLOCKING[c[C_BL]] || '?'], ['stream', p.streams[c[C_STREAM]]],
      ['thread', c[C_TID]], ['start', fmtNs(c[C_T])], ['site', str(D, c[C_SITE]) || '(no stack)']];
    if (c[C_BL] === 1 || c[C_BL] === 3) {
      var g = c[C_BYTES] / c[C_DUR];
      if (c[C_DUR] > 0) rows.push(['bandwidth', fmtGbps(g)]);
    }
    if (c[C_STATUS] !== 0) rows.push(['status', 'failed: ' + (str(D, c[C_STATUS_NAME]) || c[C_STATUS])]);
    if (c[C_MORE_N] > 0)
      rows.push(['not drawn', c[C_MORE_N] + ' more copies (' + fmtBytes(c[C_MORE_B]) + ') in this pixel column']);
    return rows;
  }

  function Timeline(D, box, onView) {
    var self = this, layout = buildTracks(D);
    var width = Math.max(900, box.clientWidth || 1200), plotW = width - LABEL_W - RIGHT_PAD;
    var span = Math.max(D.span, 1);
    this.v0 = 0; this.v1 = span;
    var root = svg('svg', { width: width, height: layout.height, class: 'xp-timeline-svg' }, box);
    defs(root);
    var bg = svg('g', {}, root), axis = svg('g', { class: 'axis' }, root), marks = svg('g', {}, root);
    var labels = svg('g', {}, root), sel = svg('rect', { class: 'sel', y: 30, height: layout.height - 34, width: 0 }, root);
    var clip = svg('clipPath', { id: 'xp-tl-clip' }, root.firstChild);
    svg('rect', { x: LABEL_W, y: 0, width: plotW, height: layout.height }, clip);
    marks.setAttribute('clip-path', 'url(#xp-tl-clip)');
    layout.tracks.forEach(function (t) {
      if (t.kind === 'proc') {
        svgText(labels, 6, t.y + 14, t.label, { class: 'proc-label' });
        svg('line', { x1: 0, x2: width, y1: t.y + t.h, y2: t.y + t.h, stroke: '#c5ccd3' }, bg);
        return;
      }
      svg('rect', { class: 'row-bg', x: LABEL_W, y: t.y, width: plotW, height: t.h }, bg);
      svgText(labels, 14, t.y + t.h / 2 + 4, t.label, { class: 'track-label' });
    });
    var trackOf = {};
    layout.tracks.forEach(function (t) { trackOf[t.kind + ':' + t.proc + ':' + (t.kind === 'stream' ? t.stream : t.tid)] = t; });
    function X(t) { return LABEL_W + (t - self.v0) / (self.v1 - self.v0) * plotW; }
    function visible(t, d) { return t + d >= self.v0 && t <= self.v1; }
    function bar(parent, t, d, y, h, attrs) {
      var x0 = Math.max(X(t), LABEL_W - 2), x1 = Math.min(X(t + d), LABEL_W + plotW + 2);
      attrs.x = x0.toFixed(1); attrs.y = y; attrs.height = h; attrs.width = Math.max(1, x1 - x0).toFixed(1);
      return svg('rect', attrs, parent);
    }
    function drawAxis() {
      axis.textContent = '';
      var tk = niceTicks(self.v0, self.v1, Math.max(4, Math.floor(plotW / 110))), u = timeUnit(tk.step);
      svg('line', { class: 'base', x1: LABEL_W, x2: LABEL_W + plotW, y1: 28, y2: 28 }, axis);
      tk.ticks.forEach(function (v) {
        var x = X(v);
        svg('line', { x1: x, x2: x, y1: 24, y2: layout.height - 4 }, axis);
        svgText(axis, x, 20, tickLabel(v, tk.step, u.div), { 'text-anchor': 'middle' });
      });
      svgText(axis, 6, 20, 'time since start (' + u.name + ')', { class: 'unit' });
    }
    this.draw = function () {
      marks.textContent = '';
      drawAxis();
      D.nvtx.forEach(function (r, i) {
        var t = trackOf['nvtx:' + r[2] + ':' + r[3]];
        if (!t || !visible(r[0], r[1])) return;
        var depth = Math.min(r[4], 5), name = str(D, r[5]) || '(unnamed)';
        var hue = 0;
        for (var k = 0; k < name.length; k++) hue = (hue * 31 + name.charCodeAt(k)) % 360;
        var b = bar(marks, r[0], r[1], t.y + 2 + depth * 15, 14,
          { class: 'xp-nvtx', fill: 'hsl(' + hue + ',45%,72%)', 'data-k': 'n', 'data-i': i });
        var w = Number(b.getAttribute('width'));
        if (w > 30) {
          var chars = Math.floor((w - 6) / 6.2);
          svgText(marks, Number(b.getAttribute('x')) + 3, t.y + 13 + depth * 15,
            name.length > chars ? name.slice(0, Math.max(1, chars - 1)) + '\u2026' : name,
            { 'pointer-events': 'none', style: 'font-size:10px' });
        }
      });
      D.copies.forEach(function (c, i) {
        if (!visible(c[C_T], c[C_DUR])) return;
        var ts = trackOf['stream:' + c[C_PROC] + ':' + c[C_STREAM]];
        var fill = copyFill(c[C_DIR], c[C_HM]), failed = c[C_STATUS] !== 0 ? ' xp-failed' : '';
        if (ts)
          bar(marks, c[C_T], c[C_DUR], ts.y + 3, ts.h - 6, { class: 'xp-copy' + failed, fill: fill, 'data-k': 'c', 'data-i': i });
        var th = trackOf['thread:' + c[C_PROC] + ':' + c[C_TID]];
        if (th && isBlocking(c))
          bar(marks, c[C_T], c[C_DUR], th.y + 3, th.h - 6, { class: 'xp-block' + failed, fill: fill, 'data-k': 'c', 'data-i': i });
      });
      D.syncs.forEach(function (s, i) {
        var t = trackOf['thread:' + s[2] + ':' + s[3]];
        if (!t || !visible(s[0], s[1])) return;
        bar(marks, s[0], s[1], t.y + 7, t.h - 14, { class: 'xp-sync', 'data-k': 's', 'data-i': i });
        var x = X(s[0] + s[1]);
        svg('path', { d: 'M' + x.toFixed(1) + ',' + (t.y + 1) + 'l-3,-0 3,5 3,-5z', fill: '#37474f', 'pointer-events': 'none' }, marks);
      });
      if (onView) onView(self.v0, self.v1);
    };
    this.setView = function (a, b) {
      var minSpan = Math.min(span, 1000);
      if (b - a < minSpan) { var m = (a + b) / 2; a = m - minSpan / 2; b = m + minSpan / 2; }
      if (a < 0) { b -= a; a = 0; }
      if (b > span) { a -= b - span; b = span; }
      self.v0 = Math.max(0, a); self.v1 = Math.min(span, b);
      self.draw();
    };
    this.zoom = function (f, at) {
      if (at === undefined) at = (self.v0 + self.v1) / 2;
      self.setView(at - (at - self.v0) * f, at + (self.v1 - at) * f);
    };
    function tAt(ev) {
      var r = root.getBoundingClientRect();
      return self.v0 + (ev.clientX - r.left - LABEL_W) / plotW * (self.v1 - self.v0);
    }
    root.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      self.zoom(ev.deltaY < 0 ? 0.8 : 1.25, tAt(ev));
    }, { passive: false });
    var dragFrom = null;
    root.addEventListener('mousedown', function (ev) {
      var r = root.getBoundingClientRect();
      if (ev.clientX - r.left < LABEL_W) return;
      dragFrom = ev.clientX - r.left;
      ev.preventDefault();
    });
    window.addEventListener('mousemove', function (ev) {
      if (dragFrom === null) return;
      var x = ev.clientX - root.getBoundingClientRect().left;
      x = Math.max(LABEL_W, Math.min(LABEL_W + plotW, x));
      sel.setAttribute('x', Math.min(x, dragFrom));
      sel.setAttribute('width', Math.abs(x - dragFrom));
    });
    window.addEventListener('mouseup', function (ev) {
      if (dragFrom === null) return;
      var r = root.getBoundingClientRect(), x = ev.clientX - r.left, a = dragFrom;
      dragFrom = null;
      sel.setAttribute('width', 0);
      if (Math.abs(x - a) < 4) return;
      var t = function (px) { return self.v0 + (px - LABEL_W) / plotW * (self.v1 - self.v0); };
      self.setView(t(Math.min(a, x)), t(Math.max(a, x)));
    });
    root.addEventListener('mousemove', function (ev) {
      var e = ev.target, k = e.getAttribute && e.getAttribute('data-k');
      if (!k) { hideTip(); return; }
      var i = Number(e.getAttribute('data-i'));
      if (k === 'c') {
        var c = D.copies[i];
        showTip(ev, (DIRS[c[C_DIR]] || '?') + ' copy, ' + fmtBytes(c[C_BYTES]), copyRows(D, c));
      } else if (k === 's') {
        var s = D.syncs[i];
        showTip(ev, 'synchronization, ' + fmtNs(s[1]), [['api', str(D, s[4])], ['waited', fmtNs(s[1])],
          ['thread', s[3]], ['stream', str(D, s[6])], ['start', fmtNs(s[0])], ['site', str(D, s[5]) || '(no stack)']]);
      } else if (k === 'n') {
        var n = D.nvtx[i];
        showTip(ev, 'NVTX range ' + (str(D, n[5]) || '(unnamed)'), [['duration', fmtNs(n[1])],
          ['thread', n[3]], ['depth', n[4]], ['start', fmtNs(n[0])]]);
      }
    });
    root.addEventListener('mouseleave', hideTip);
    this.width = width; this.plotW = plotW;
  }

  function timelineLegend(box) {
    var l = html('div', 'legend', box);
    [1, 2, 3, 4].forEach(function (d) {
      legendSwatch(l, DIRS[d], function (g) { svg('rect', { x: 1, y: 1, width: 20, height: 10, fill: DIR_COLORS[d] }, g); });
    });
    legendSwatch(l, 'pinned (solid)', function (g) { svg('rect', { x: 1, y: 1, width: 20, height: 10, fill: '#666' }, g); });
    legendSwatch(l, 'pageable (hatched)', function (g) {
      defs(g).firstChild.setAttribute('id', 'xp-hatch-legend');
      svg('rect', { x: 1, y: 1, width: 20, height: 10, fill: 'url(#xp-hatch-legend)' }, g);
    });
    legendSwatch(l, 'synchronization (host waits)', function (g) {
      svg('rect', { x: 1, y: 3, width: 20, height: 6, class: 'xp-sync' }, g);
    });
    legendSwatch(l, 'failed call', function (g) {
      svg('rect', { x: 2, y: 2, width: 18, height: 8, fill: '#fff', class: 'xp-failed' }, g);
    });
    legendSwatch(l, 'NVTX range', function (g) { svg('rect', { x: 1, y: 1, width: 20, height: 10, fill: 'hsl(200,45%,72%)' }, g); });
  }

  /* ------------------------------------------------------------ device memory */

  /* mem entries: {proc, device, peak, peak_t, pts: [[t, live]...], oom: [[t, requested, free, total, detail, api, site, status]]} */
  function MemoryCharts(D, box, tl) {
    var charts = [];
    D.mem.forEach(function (m) {
      var p = D.procs[m.proc] || {};
      html('h3', null, box, (p.label || '(process ' + m.proc + ')') + ', device ' + m.device);
      var facts = [];
      html('div', 'note', box, 'peak ' + fmtBytes(m.peak) + ' at ' + fmtNs(m.peak_t) + '; ' + m.allocs +
        ' allocation(s), ' + m.oom.length + ' failed' + (m.live_at_exit ? '; ' + fmtBytes(m.live_at_exit) + ' live at exit' : ''));
      D.frag.forEach(function (f) { if (f.proc === m.proc) facts.push(f); });
      facts.forEach(function (f) {
        html('div', 'note warn', box, 'fragmentation: ' + f.message + (f.facts.length ? ' (' + f.facts.map(function (kv) {
          return kv[0] + ' ' + kv[1];
        }).join(', ') + ')' : ''));
      });
      var c = html('div', 'chart', box), H = 190, top = 14, bottom = 26, ph = H - top - bottom;
      var width = tl ? tl.width : Math.max(900, box.clientWidth || 1200), plotW = width - LABEL_W - RIGHT_PAD;
      var root = svg('svg', { width: width, height: H }, c);
      /* Scaled to the peak: a failed request (often absurdly large) is a marked line, not a height. */
      var maxY = Math.max(m.peak * 1.15, 1);
      charts.push({ m: m, root: root, plotW: plotW, top: top, ph: ph, maxY: maxY, H: H });
    });
    function draw(v0, v1) {
      charts.forEach(function (ch) {
        var root = ch.root, m = ch.m, plotW = ch.plotW, top = ch.top, ph = ch.ph;
        root.textContent = '';
        var X = function (t) { return LABEL_W + (t - v0) / Math.max(v1 - v0, 1) * plotW; };
        var Y = function (b) { return top + ph - Math.min(b, ch.maxY) / ch.maxY * ph; };
        var cp = svg('clipPath', { id: 'xp-mem-clip-' + m.proc + '-' + m.device }, svg('defs', {}, root));
        svg('rect', { x: LABEL_W, y: 0, width: plotW, height: ch.H }, cp);
        var axis = svg('g', { class: 'axis' }, root);
        var u = byteUnit(ch.maxY / 1.15), yt = niceTicks(0, ch.maxY / u.div, 4);
        yt.ticks.forEach(function (v) {
          var y = Y(v * u.div);
          svg('line', { x1: LABEL_W, x2: LABEL_W + plotW, y1: y, y2: y }, axis);
          svgText(axis, LABEL_W - 6, y + 4, tickLabel(v, yt.step, 1), { 'text-anchor': 'end' });
        });
        svgText(axis, 6, top + ph / 2, 'live device memory (' + u.name + ')', { class: 'unit' });
        var xt = niceTicks(v0, v1, Math.max(4, Math.floor(plotW / 110))), tu = timeUnit(xt.step);
        svg('line', { class: 'base', x1: LABEL_W, x2: LABEL_W + plotW, y1: top + ph, y2: top + ph }, axis);
        xt.ticks.forEach(function (v) {
          var x = X(v);
          svg('line', { x1: x, x2: x, y1: top + ph, y2: top + ph + 4, class: 'base' }, axis);
          svgText(axis, x, top + ph + 16, tickLabel(v, xt.step, tu.div), { 'text-anchor': 'middle' });
        });
        svgText(axis, 6, top + ph + 16, 'time since start (' + tu.name + ')', { class: 'unit' });
        var g = svg('g', { 'clip-path': 'url(#xp-mem-clip-' + m.proc + '-' + m.device + ')' }, root);
        var d = 'M' + X(0).toFixed(1) + ',' + Y(0).toFixed(1);
        m.pts.forEach(function (pt) { d += 'H' + X(pt[0]).toFixed(1) + 'V' + Y(pt[1]).toFixed(1); });
        d += 'H' + X(D.span).toFixed(1);
        svg('path', { class: 'xp-mem-area', d: d + 'V' + Y(0).toFixed(1) + 'Z' }, g);
        svg('path', { class: 'xp-mem-line', d: d }, g);
        if (m.peak > 0) {
          var px = X(m.peak_t), py = Y(m.peak);
          svg('circle', { class: 'xp-peak', cx: px, cy: py, r: 4, fill: '#1565c0', 'data-k': 'p' }, g);
          var pr = px > LABEL_W + plotW - 120;
          svgText(g, pr ? px - 7 : px + 7, py - 5, 'peak ' + fmtBytes(m.peak),
            { style: 'font-weight:600', 'text-anchor': pr ? 'end' : 'start' });
        }
        m.oom.forEach(function (o, i) {
          var x = X(o[0]);
          svg('line', { class: 'xp-oom', x1: x, x2: x, y1: top, y2: top + ph, 'stroke-dasharray': '4 3' }, g);
          var right = x > LABEL_W + plotW - 220;
          /* Low in the chart: the peak's label sits at the top. */
          var lbl = svgText(g, right ? x - 4 : x + 4, top + ph - 8, '\u2716 out of memory: ' + fmtBytes(o[1]) + ' requested',
            { 'text-anchor': right ? 'end' : 'start', style: 'fill:#c62828;font-weight:600' });
          lbl.setAttribute('data-k', 'o');
          lbl.setAttribute('data-i', i);
          var hit = svg('rect', { x: x - 4, y: top, width: 8, height: ph, fill: 'transparent', 'data-k': 'o', 'data-i': i }, g);
          hit.setAttribute('class', 'xp-oom-hit');
        });
        root.onmousemove = function (ev) {
          var k = ev.target.getAttribute && ev.target.getAttribute('data-k');
          if (k === 'o') {
            var o = m.oom[Number(ev.target.getAttribute('data-i'))];
            showTip(ev, 'failed allocation', [['api', str(D, o[5])], ['requested', fmtBytes(o[1])],
              ['device free', o[2] >= 0 ? fmtBytes(o[2]) : 'unknown'], ['device total', o[3] >= 0 ? fmtBytes(o[3]) : 'unknown'],
              ['status', str(D, o[7])], ['error', str(D, o[4])], ['at', fmtNs(o[0])], ['site', str(D, o[6]) || '(no stack)']]);
          } else if (k === 'p') {
            showTip(ev, 'peak', [['live', fmtBytes(m.peak)], ['at', fmtNs(m.peak_t)]]);
          } else hideTip();
        };
        root.onmouseleave = hideTip;
      });
    }
    return { draw: draw, count: charts.length };
  }

  /* ---------------------------------------------------------------- bandwidth */

  function Bandwidth(D, box) {
    var pts = [];
    D.copies.forEach(function (c, i) {
      if (c[C_STATUS] === 0 && c[C_DUR] > 0 && c[C_BYTES] > 0 && isBlocking(c)) pts.push(i);
    });
    if (!pts.length) {
      html('p', 'note xp-empty', box, 'No copies to measure: bandwidth is measured on successful copies that held the caller for the whole transfer (sync and async_pageable).');
      return;
    }
    var lx = [], ly = [];
    pts.forEach(function (i) {
      var c = D.copies[i];
      lx.push(Math.log10(c[C_BYTES]));
      ly.push(Math.log10(c[C_BYTES] / c[C_DUR]));
    });
    var x0 = Math.floor(Math.min.apply(null, lx)), x1 = Math.ceil(Math.max.apply(null, lx));
    var y0 = Math.floor(Math.min.apply(null, ly)), y1 = Math.ceil(Math.max.apply(null, ly));
    if (x1 === x0) x1++;
    if (y1 === y0) y1++;
    var W = 760, H = 380, L = 80, R = 20, T = 14, B = 46, pw = W - L - R, ph = H - T - B;
    var X = function (v) { return L + (v - x0) / (x1 - x0) * pw; };
    var Y = function (v) { return T + ph - (v - y0) / (y1 - y0) * ph; };
    var l = html('div', 'legend', box);
    [1, 2, 3, 4].forEach(function (d) {
      legendSwatch(l, DIRS[d], function (g) { svg('circle', { cx: 11, cy: 6, r: 4, fill: DIR_COLORS[d] }, g); });
    });
    legendSwatch(l, 'pinned (filled)', function (g) { svg('circle', { cx: 11, cy: 6, r: 4, fill: '#666' }, g); });
    legendSwatch(l, 'pageable (hollow)', function (g) { svg('circle', { cx: 11, cy: 6, r: 3.5, fill: '#fff', stroke: '#666', 'stroke-width': 1.5 }, g); });
    legendSwatch(l, 'no host side / managed (square)', function (g) { svg('rect', { x: 7, y: 2, width: 8, height: 8, fill: '#666' }, g); });
    var c = html('div', 'chart', box);
    c.style.display = 'inline-block';
    var root = svg('svg', { width: W, height: H }, c), axis = svg('g', { class: 'axis' }, root);
    var bytesLabel = function (e) {
      var v = Math.pow(10, e);
      return v < 1000 ? String(Math.round(v)) + ' B' : v < 1e6 ? v / 1e3 + ' kB' : v < 1e9 ? v / 1e6 + ' MB' : v / 1e9 + ' GB';
    };
    for (var e = x0; e <= x1; e++) {
      svg('line', { x1: X(e), x2: X(e), y1: T, y2: T + ph }, axis);
      svgText(axis, X(e), T + ph + 16, bytesLabel(e), { 'text-anchor': 'middle' });
    }
    for (e = y0; e <= y1; e++) {
      svg('line', { x1: L, x2: L + pw, y1: Y(e), y2: Y(e) }, axis);
      svgText(axis, L - 6, Y(e) + 4, String(Number(Math.pow(10, e).toPrecision(1))), { 'text-anchor': 'end' });
    }
    svg('rect', { x: L, y: T, width: pw, height: ph, fill: 'none', stroke: '#9aa5b1' }, axis);
    svgText(axis, L + pw / 2, H - 8, 'copy size (bytes, log scale)', { 'text-anchor': 'middle', class: 'unit' });
    svgText(axis, 14, T + ph / 2, 'bandwidth (GB/s, log)', { 'text-anchor': 'middle', class: 'unit',
      transform: 'rotate(-90 14 ' + (T + ph / 2) + ')' });
    var g = svg('g', {}, root);
    pts.forEach(function (i, k) {
      var cp = D.copies[i], col = DIR_COLORS[cp[C_DIR]] || DIR_COLORS[0], x = X(lx[k]), y = Y(ly[k]);
      var a = { class: 'xp-bw-pt', 'data-i': i, 'fill-opacity': 0.8 };
      if (cp[C_HM] === 2 || cp[C_HM] === 1) {
        a.cx = x.toFixed(1); a.cy = y.toFixed(1); a.r = 3.5;
        if (cp[C_HM] === 1) { a.fill = '#fff'; a.stroke = col; a['stroke-width'] = 1.5; } else a.fill = col;
        svg('circle', a, g);
      } else {
        a.x = (x - 3).toFixed(1); a.y = (y - 3).toFixed(1); a.width = 6; a.height = 6; a.fill = col;
        svg('rect', a, g);
      }
    });
    root.addEventListener('mousemove', function (ev) {
      var t = ev.target, i = t.getAttribute && t.getAttribute('data-i');
      if (i === null || i === undefined || i === '') { hideTip(); return; }
      var cp = D.copies[Number(i)];
      showTip(ev, (DIRS[cp[C_DIR]] || '?') + ' ' + fmtBytes(cp[C_BYTES]) + ' at ' + fmtGbps(cp[C_BYTES] / cp[C_DUR]), copyRows(D, cp));
    });
    root.addEventListener('mouseleave', hideTip);
    html('p', 'note', box, pts.length + ' blocking copies plotted (sync and async_pageable: the call held the caller for the whole transfer, so bytes / held time is the bandwidth). Async copies return before the transfer ends and are left out.');
  }

  /* -------------------------------------------------------------- sort tables */

  function sortable(table) {
    var ths = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(ths, function (th, col) {
      var arrow = html('span', 'arrow', th, '\u21c5');
      th.title = 'sort by ' + th.textContent.replace('\u21c5', '');
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute('data-dir'); o.lastChild.textContent = '\u21c5'; });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        arrow.textContent = asc ? '\u25b2' : '\u25bc';
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var key = function (r) {
          var c = r.cells[col];
          if (!c) return '';
          var v = c.getAttribute('data-v');
          return v !== null ? Number(v) : c.textContent.toLowerCase();
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), d = x < y ? -1 : x > y ? 1 : 0;
          return asc ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  /* --------------------------------------------------------------------- main */

  function main() {
    Array.prototype.forEach.call(document.querySelectorAll('table.xp-sortable'), sortable);
    var dataEl = document.getElementById('xp-data'), tlBox = document.getElementById('xp-timeline');
    if (dataEl && tlBox) {
      var D = JSON.parse(dataEl.textContent);
      ['copies', 'syncs', 'nvtx', 'mem', 'frag', 'procs', 'strings'].forEach(function (k) { if (!Array.isArray(D[k])) D[k] = []; });
      var mem = null, tl = null;
      if (!D.copies.length && !D.syncs.length && !D.nvtx.length) {
        html('p', 'note xp-empty', tlBox, 'No copies, synchronizations or NVTX ranges in this run.');
      } else {
        timelineLegend(document.getElementById('xp-timeline-legend') || tlBox);
        var memBox = document.getElementById('xp-memory');
        tl = new Timeline(D, tlBox, function (a, b) {
          var r = document.getElementById('xp-range');
          if (r) r.textContent = 'showing ' + fmtNs(a) + ' \u2013 ' + fmtNs(b) + ' of ' + fmtNs(D.span);
          if (mem) mem.draw(a, b);
        });
        var bind = function (id, fn) { var b = document.getElementById(id); if (b) b.addEventListener('click', fn); };
        bind('xp-zoom-in', function () { tl.zoom(0.5); });
        bind('xp-zoom-out', function () { tl.zoom(2); });
        bind('xp-zoom-reset', function () { tl.setView(0, D.span); });
        if (memBox && D.mem.length) mem = MemoryCharts(D, memBox, tl);
        tl.draw();
      }
      var memBox2 = document.getElementById('xp-memory');
      if (memBox2 && !D.mem.length)
        html('p', 'note xp-empty', memBox2, 'No device allocations (kinds device and physical) in this run.');
      else if (memBox2 && !tl) {
        mem = MemoryCharts(D, memBox2, null);
        mem.draw(0, Math.max(D.span, 1));
      }
      var bw = document.getElementById('xp-bw');
      if (bw) Bandwidth(D, bw);
    }
  }

  try {
    main();
  } catch (e) {
    fail('render failed: ' + (e && e.stack ? e.stack : e));
  }
  var ms = performance.now() - T_START;
  var out = document.getElementById('xp-render-ms');
  if (out) out.textContent = ms.toFixed(1);
  document.body.setAttribute('data-render-ms', ms.toFixed(1));
  document.body.setAttribute('data-rendered', '1');
})();

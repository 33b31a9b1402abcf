/* tcsexam view: the static results explorer (vanilla JS, no dependencies).
 *
 * Data arrive as scripts (data/run.js calls TCSX.run, data/compare.js TCSX.compare, and
 * data/task-NNN.js TCSX.task when a page needs a task's records): file:// pages cannot fetch().
 * Routes live in the URL's hash (#/task/<task>?model=m), so every view can be bookmarked.
 */
(function () {
  'use strict';
  var T = (window.TCSX = {});
  var RUN = null;
  var CMP;  // undefined until compare.js ran (null: no comparison)
  var TASKS = {};
  var WAITING = {};
  var STATUSES = ['ok', 'timeout', 'memout', 'crash', 'invalid', 'certificate_failed', 'infrastructure_error'];
  var TRACK_NAMES = { theorem: 'Theorem', solver: 'Solver', construction: 'Construction', open_conjecture: 'Open conj.' };
  var PAGE = 100;

  T.run = function (d) { RUN = d; start(); };
  T.compare = function (d) { CMP = d; start(); };
  T.task = function (i, d) {
    var cols = RUN.columns;
    d.records = d.rows.map(function (row) {
      var o = { task: d.task };
      for (var j = 0; j < cols.length; j++) o[cols[j]] = row[j];
      return o;
    });
    TASKS[i] = d;
    (WAITING[i] || []).forEach(function (f) { f(d); });
    delete WAITING[i];
  };

  function loadTask(i) {
    return new Promise(function (resolve) {
      if (TASKS[i]) return resolve(TASKS[i]);
      if (WAITING[i]) { WAITING[i].push(resolve); return; }
      WAITING[i] = [resolve];
      var s = document.createElement('script');
      s.src = RUN.tasks[i].file;
      document.body.appendChild(s);
    });
  }
  function loadAll() { return Promise.all(RUN.tasks.map(function (t) { return loadTask(t.id); })); }
  function taskByName(name) { return RUN.tasks.filter(function (t) { return t.task === name; })[0]; }

  // ---- formatting -----------------------------------------------------------------------
  function esc(s) {
    return String(s == null ? '' : s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function num(v, d) {
    if (v == null || v === '' || typeof v !== 'number' || !isFinite(v)) return v == null || v === '' ? '<span class="na">&mdash;</span>' : esc(v);
    if (d == null) d = 3;
    var a = Math.abs(v);
    if (a >= 1e7) return esc(v.toPrecision(4));
    return esc(v.toFixed(d));
  }
  function ci(c, d) { return c && c.length === 2 ? '[' + num(c[0], d) + ', ' + num(c[1], d) + ']' : ''; }
  function badge(status) {
    if (status == null || status === '') return '<span class="na">&mdash;</span>';
    return '<span class="badge st-' + esc(status) + '">' + esc(String(status).replace(/_/g, ' ')) + '</span>';
  }
  function href(parts, params) {
    var h = '#/' + parts.map(encodeURIComponent).join('/');
    var q = [];
    Object.keys(params || {}).forEach(function (k) {
      if (params[k] != null && params[k] !== '') q.push(encodeURIComponent(k) + '=' + encodeURIComponent(params[k]));
    });
    return q.length ? h + '?' + q.join('&') : h;
  }
  function shortHash(h) { return h ? esc(String(h).replace(/^sha256:/, '').slice(0, 12)) : '<span class="na">&mdash;</span>'; }
  function scoreColor(s) {
    if (s == null) return '#eee';
    var x = Math.max(0, Math.min(1, s));
    // white -> teal
    var r = Math.round(247 - x * (247 - 16)), g = Math.round(251 - x * (251 - 128)), b = Math.round(255 - x * (255 - 128));
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }
  function textOn(s) { return s != null && s > 0.55 ? '#fff' : '#111'; }
  function link(path, label) {
    return path ? '<a class="file" href="' + esc(path) + '" target="_blank" rel="noopener">' + esc(label) + '</a>' : '';
  }

  // ---- a sortable, paged table ----------------------------------------------------------------
  // cols: [{k, label, v(row) -> sort value, f(row) -> cell html, cls, title}]
  function Table(el, cols, rows, opt) {
    opt = opt || {};
    var state = { k: opt.sort || null, dir: opt.dir || 1, page: 0 };
    function sorted() {
      if (!state.k) return rows;
      var col = cols.filter(function (c) { return c.k === state.k; })[0];
      var get = col.v || function (r) { return r[col.k]; };
      var keyed = rows.map(function (r, i) { return [get(r), i, r]; });
      keyed.sort(function (a, b) {
        var x = a[0], y = b[0];
        if (x == null && y == null) return a[1] - b[1];
        if (x == null) return 1;
        if (y == null) return -1;
        if (x < y) return -state.dir;
        if (x > y) return state.dir;
        return a[1] - b[1];
      });
      return keyed.map(function (k) { return k[2]; });
    }
    function draw() {
      var all = sorted();
      var size = opt.page || PAGE;
      var pages = Math.max(1, Math.ceil(all.length / size));
      if (state.page >= pages) state.page = pages - 1;
      var shown = all.slice(state.page * size, (state.page + 1) * size);
      var h = '<table class="grid' + (opt.cls ? ' ' + opt.cls : '') + '"' + (opt.id ? ' id="' + esc(opt.id) + '"' : '') + '><thead><tr>';
      cols.forEach(function (c) {
        var arrow = state.k === c.k ? (state.dir > 0 ? ' &#9650;' : ' &#9660;') : '';
        h += '<th data-k="' + esc(c.k) + '" class="' + (c.cls || '') + (c.nosort ? '' : ' sortable') + '"' +
          (c.title ? ' title="' + esc(c.title) + '"' : '') + '>' + c.label + arrow + '</th>';
      });
      h += '</tr></thead><tbody>';
      if (!shown.length) h += '<tr><td colspan="' + cols.length + '" class="empty">' + esc(opt.empty || 'nothing to show') + '</td></tr>';
      shown.forEach(function (r) {
        var go = opt.href ? opt.href(r) : null;
        h += '<tr' + (go ? ' class="go" data-href="' + esc(go) + '"' : '') + (opt.attrs ? ' ' + opt.attrs(r) : '') + '>';
        cols.forEach(function (c) {
          var cell = c.f ? c.f(r) : esc(r[c.k]);
          h += '<td class="' + (c.cls || '') + '">' + cell + '</td>';
        });
        h += '</tr>';
      });
      h += '</tbody></table>';
      if (pages > 1 || opt.count) {
        h += '<div class="pager"><span class="count">' + all.length + ' ' + esc(opt.noun || 'rows') + '</span>';
        if (pages > 1) {
          h += '<button data-p="prev"' + (state.page === 0 ? ' disabled' : '') + '>&larr; prev</button>' +
            '<span class="pageno">page ' + (state.page + 1) + ' of ' + pages + '</span>' +
            '<button data-p="next"' + (state.page === pages - 1 ? ' disabled' : '') + '>next &rarr;</button>';
        }
        h += '</div>';
      }
      el.innerHTML = h;
      el.querySelectorAll('th.sortable').forEach(function (th) {
        th.addEventListener('click', function () {
          var k = th.getAttribute('data-k');
          if (state.k === k) state.dir = -state.dir; else { state.k = k; state.dir = opt.firstDir ? opt.firstDir(k) : 1; }
          state.page = 0;
          draw();
        });
      });
      el.querySelectorAll('.pager button').forEach(function (b) {
        b.addEventListener('click', function () { state.page += b.getAttribute('data-p') === 'next' ? 1 : -1; draw(); });
      });
      el.querySelectorAll('tr.go').forEach(function (tr) {
        tr.addEventListener('click', function (ev) {
          if (ev.target.closest('a')) return;
          location.hash = tr.getAttribute('data-href');
        });
      });
    }
    draw();
    return { redraw: draw, setRows: function (r) { rows = r; state.page = 0; draw(); } };
  }

  // ---- plots (SVG) -------------------------------------------------------------------
  function histogram(scores, fails, w, h) {
    // scores: Phi of ok records; fails: number of failed records (score 0)
    var bins = new Array(10).fill(0);
    scores.forEach(function (s) { bins[Math.min(9, Math.floor(s * 10))] += 1; });
    var maxc = Math.max(1, fails, Math.max.apply(null, bins));
    var bw = (w - 40) / 11, svg = '<svg class="hist" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '">';
    var ph = h - 18;
    svg += '<rect x="2" y="' + (ph - (fails / maxc) * (ph - 4)) + '" width="' + (bw - 2) + '" height="' + ((fails / maxc) * (ph - 4)) + '" class="bar-fail"><title>' + fails + ' failed (score 0)</title></rect>';
    svg += '<text x="' + (2 + bw / 2) + '" y="' + (h - 4) + '" class="axis" text-anchor="middle">fail</text>';
    bins.forEach(function (c, i) {
      var x = 8 + bw * (i + 1), bh = (c / maxc) * (ph - 4);
      svg += '<rect x="' + x + '" y="' + (ph - bh) + '" width="' + (bw - 2) + '" height="' + bh + '" fill="' + scoreColor((i + 0.5) / 10) + '" class="bar"><title>Phi in [' + (i / 10).toFixed(1) + ', ' + ((i + 1) / 10).toFixed(1) + '): ' + c + '</title></rect>';
    });
    svg += '<line x1="' + (8 + bw) + '" x2="' + (w - 30) + '" y1="' + ph + '" y2="' + ph + '" class="axisline"/>';
    svg += '<text x="' + (8 + bw) + '" y="' + (h - 4) + '" class="axis">0</text><text x="' + (w - 34) + '" y="' + (h - 4) + '" class="axis" text-anchor="end">1</text>';
    svg += '<text x="' + (w - 2) + '" y="10" class="axis" text-anchor="end">' + maxc + '</text>';
    return svg + '</svg>';
  }

  function tracePlot(trace, mu, wall) {
    if (!trace || !trace.length) return '<p class="na">no anytime trace (not an anytime task, or no certificate seen)</p>';
    var w = 520, h = 220, L = 64, R = 12, Tp = 12, B = 34;
    var pts = trace.map(function (p) { return { t: +p[0], s: p[1], v: p[2] == null ? null : +p[2] }; });
    var vals = pts.filter(function (p) { return p.v != null; }).map(function (p) { return p.v; });
    if (mu != null) vals.push(mu);
    var tmax = Math.max(wall || 0, Math.max.apply(null, pts.map(function (p) { return p.t; }))) || 1;
    var vmin = vals.length ? Math.min.apply(null, vals) : 0, vmax = vals.length ? Math.max.apply(null, vals) : 1;
    if (vmin === vmax) { vmin -= 1; vmax += 1; }
    var pad = (vmax - vmin) * 0.08; vmin -= pad; vmax += pad;
    function X(t) { return L + (t / tmax) * (w - L - R); }
    function Y(v) { return Tp + (1 - (v - vmin) / (vmax - vmin)) * (h - Tp - B); }
    var svg = '<svg class="trace" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '">';
    svg += '<rect x="' + L + '" y="' + Tp + '" width="' + (w - L - R) + '" height="' + (h - Tp - B) + '" class="frame"/>';
    [vmin + pad, (vmin + vmax) / 2, vmax - pad].forEach(function (v) {
      svg += '<text x="' + (L - 4) + '" y="' + (Y(v) + 4) + '" class="axis" text-anchor="end">' + esc(+v.toPrecision(5)) + '</text>';
    });
    [0, tmax / 2, tmax].forEach(function (t) {
      svg += '<text x="' + X(t) + '" y="' + (h - B + 14) + '" class="axis" text-anchor="middle">' + esc(t.toFixed(2)) + '</text>';
    });
    svg += '<text x="' + ((L + w - R) / 2) + '" y="' + (h - 4) + '" class="axis" text-anchor="middle">seconds</text>';
    if (mu != null) {
      svg += '<line x1="' + L + '" x2="' + (w - R) + '" y1="' + Y(mu) + '" y2="' + Y(mu) + '" class="mu"/>' +
        '<text x="' + (w - R - 4) + '" y="' + (Y(mu) - 4) + '" class="axis mu-label" text-anchor="end">reference mean</text>';
    }
    var path = '', last = null;
    pts.forEach(function (p) {
      if (p.v == null) return;
      if (last == null) path += 'M' + X(p.t) + ',' + Y(p.v);
      else path += 'H' + X(p.t) + 'V' + Y(p.v);
      last = p;
    });
    if (last) path += 'H' + X(tmax);
    svg += '<path d="' + path + '" class="step"/>';
    pts.forEach(function (p) {
      var y = p.v == null ? Tp + 6 : Y(p.v);
      svg += '<circle cx="' + X(p.t) + '" cy="' + y + '" r="3.5" class="pt st-' + esc(p.s) + '"><title>t=' + esc(p.t) + ' s: ' + esc(p.s) + (p.v != null ? ', value ' + esc(p.v) : '') + '</title></circle>';
    });
    return svg + '</svg>';
  }

  function ciBar(v, c, max) {
    if (v == null) return '';
    var w = 120, h = 14;
    function X(x) { return 2 + (Math.max(0, Math.min(max, x)) / max) * (w - 4); }
    var s = '<svg class="cibar" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '"><rect x="2" y="5" width="' + (w - 4) + '" height="4" class="track"/>';
    if (c) s += '<line x1="' + X(c[0]) + '" x2="' + X(c[1]) + '" y1="7" y2="7" class="ci"/>';
    return s + '<circle cx="' + X(v) + '" cy="7" r="4" class="dot"/></svg>';
  }

  // ---- page frame -----------------------------------------------------------------------
  function nav(active) {
    var items = [['', 'Leaderboard'], ['tasks', 'Tasks'], ['instances', 'Instances'], ['items', 'Constructions & proofs']];
    if (RUN.orspace && RUN.orspace.length) items.push(['orspace', 'OR-Space']);
    if (RUN.cost) items.push(['cost', 'Cost']);
    items.push(['provenance', 'Provenance']);
    items.push(['issues', 'Issues' + (RUN.issues.length ? ' <span class="pill">' + RUN.issues.length + '</span>' : '')]);
    if (CMP) items.push(['compare', 'Comparison <span class="pill v-' + esc(CMP.verdict) + '">' + esc(CMP.verdict) + '</span>']);
    document.getElementById('nav').innerHTML = items.map(function (it) {
      return '<a href="#/' + it[0] + '" class="' + (active === it[0] ? 'active' : '') + '" data-nav="' + (it[0] || 'leaderboard') + '">' + it[1] + '</a>';
    }).join('');
  }
  function main(html) {
    var m = document.getElementById('main');
    m.innerHTML = html;
    return m;
  }
  function crumbs(list) {
    return '<div class="crumbs">' + list.map(function (c) { return c[1] ? '<a href="' + esc(c[1]) + '">' + esc(c[0]) + '</a>' : '<span>' + esc(c[0]) + '</span>'; }).join(' <span class="sep">/</span> ') + '</div>';
  }
  function kv(obj, keys) {
    var h = '<table class="kv">';
    (keys || Object.keys(obj || {})).forEach(function (k) {
      var v = obj[k];
      if (v === undefined) return;
      var cell = v === null || v === '' ? '<span class="na">&mdash;</span>' : typeof v === 'object' ? '<pre>' + esc(JSON.stringify(v, null, 1)) + '</pre>' : esc(v);
      h += '<tr><th>' + esc(k) + '</th><td>' + cell + '</td></tr>';
    });
    return h + '</table>';
  }

  // ---- leaderboard -----------------------------------------------------------------------
  function reasons(m) {
    if (!m.issues || !m.issues.length) return '';
    var by = {};
    m.issues.forEach(function (i) { var k = i.reason || 'issue'; (by[k] = by[k] || []).push(i); });
    return '<ul class="reasons">' + Object.keys(by).map(function (k) {
      var list = by[k];
      var what = list.slice(0, 3).map(function (i) { return esc((i.item || '') + (i.attempt ? ' #' + i.attempt : '')); }).join(', ');
      return '<li title="' + esc(list.map(function (i) { return i.message; }).join('\n')) + '"><b>' + esc(k.replace(/_/g, ' ')) + '</b> (' + list.length + ')' + (what ? ': ' + what + (list.length > 3 ? ', &hellip;' : '') : '') + '</li>';
    }).join('') + '</ul>';
  }

  function viewLeaderboard() {
    nav('');
    var tracks = RUN.meta.tracks;
    var m = main(
      '<h1>Leaderboard <span class="sub">' + esc(RUN.meta.title) + ' &middot; reference ' + esc(RUN.meta.reference_id || '?') + '</span></h1>' +
      '<p class="help">Index = ' + tracks.map(function (t) { return (RUN.meta.weights || {})[t] + '&thinsp;' + esc(TRACK_NAMES[t]); }).join(' + ') +
      ' (track means in [0,1]; construction rewards may exceed 1). Intervals: 95% bootstrap. Click a header to sort; a model for its tasks.</p>' +
      '<div id="lb"></div><h2>Score per task</h2><p class="help">Each cell is the task mean of the model&rsquo;s adopted attempts; click one to see the instances behind it.</p><div id="matrix"></div>');
    var cols = [
      { k: 'rank', label: '#', v: function (r) { return r.rank; }, f: function (r) { return r.rank; }, cls: 'num' },
      { k: 'model', label: 'Model', f: function (r) { return '<a href="' + href(['model', r.model]) + '" class="model">' + esc(r.model) + '</a>'; } },
      { k: 'index', label: 'Index', cls: 'num', f: function (r) {
        return '<span class="index" data-model="' + esc(r.model) + '" data-field="index" data-value="' + (r.index == null ? '' : r.index) + '">' + num(r.index, 2) + '</span>';
      } },
      { k: 'ci', label: '95% interval', nosort: true, f: function (r) { return '<span class="ci" data-model="' + esc(r.model) + '" data-field="index_ci95" data-value="' + esc(JSON.stringify(r.index_ci95 || null)) + '">' + ci(r.index_ci95, 2) + '</span> ' + ciBar(r.index, r.index_ci95, 100); } }
    ];
    tracks.forEach(function (t) {
      cols.push({ k: 't_' + t, label: TRACK_NAMES[t], cls: 'num', v: function (r) { return r.track_means[t]; }, title: 'track mean, 95% interval on hover',
        f: function (r) { return '<span data-model="' + esc(r.model) + '" data-field="track:' + t + '" data-value="' + (r.track_means[t] == null ? '' : r.track_means[t]) + '" title="' + esc(r.track_ci95 && r.track_ci95[t] ? '95% interval ' + r.track_ci95[t].map(function (x) { return x.toFixed(3); }).join(' to ') : '') + '">' + num(r.track_means[t], 3) + '</span>'; } });
    });
    if (CMP && CMP.deltas) {
      var idx = {};
      CMP.deltas.forEach(function (d) { if (d.level === 'index') idx[d.model] = d; });
      cols.push({ k: 'delta', label: '&Delta; vs baseline', cls: 'num', v: function (r) { return (idx[r.model] || {}).delta; },
        f: function (r) {
          var d = idx[r.model];
          if (!d) return '<span class="na">not in the baseline</span>';
          return num(d.delta, 2) + ' <a href="#/compare"><span class="pill v-' + esc(d.verdict.replace(' ', '-')) + '">' + esc(d.verdict) + '</span></a>';
        } });
    }
    cols.push({ k: 'status', label: 'Status', v: function (r) { return { complete: 0, provisional: 1, incomplete: 2 }[r.status]; }, f: function (r) { return '<span data-model="' + esc(r.model) + '" data-field="status" data-value="' + esc(r.status) + '">' + badge(r.status) + '</span>' + reasons(r); } });
    var rows = RUN.leaderboard.slice();
    var ranked = rows.slice().sort(function (a, b) { return (b.index == null ? -1 : b.index) - (a.index == null ? -1 : a.index); });
    ranked.forEach(function (r, i) { r.rank = r.index == null ? null : i + 1; });
    Table(m.querySelector('#lb'), cols, rows, { id: 'leaderboard', sort: 'index', dir: -1, firstDir: function (k) { return k === 'model' || k === 'rank' || k === 'status' ? 1 : -1; } });
    m.querySelector('#matrix').innerHTML = matrix();
  }

  function matrix() {
    var models = RUN.leaderboard.map(function (r) { return r; });
    var h = '<table class="grid matrix" id="task-matrix"><thead><tr><th>Track</th><th>Task</th>' +
      models.map(function (r) { return '<th class="num">' + esc(r.model) + '</th>'; }).join('') + '</tr></thead><tbody>';
    RUN.meta.tracks.forEach(function (t) {
      var items = (RUN.meta.suite_items || {})[t] || [];
      items.forEach(function (item, i) {
        h += '<tr>' + (i === 0 ? '<th rowspan="' + items.length + '" class="track">' + esc(TRACK_NAMES[t]) + '</th>' : '');
        var target = t === 'solver' ? function (m) { return href(['task', item], { model: m }); } : function (m) { return href(['items'], { item: item, model: m }); };
        h += '<td><a href="' + (t === 'solver' ? href(['task', item]) : href(['items'], { item: item })) + '">' + esc(item) + '</a></td>';
        models.forEach(function (r) {
          var v = (r.task_means || {})[item];
          h += '<td class="num cell" style="background:' + scoreColor(v == null ? null : Math.min(1, v)) + ';color:' + textOn(v) + '">' +
            '<a href="' + target(r.model) + '" data-task="' + esc(item) + '" data-model="' + esc(r.model) + '" style="color:inherit">' + (v == null ? '&mdash;' : num(v, 3)) + '</a></td>';
        });
        h += '</tr>';
      });
    });
    return h + '</tbody></table>';
  }

  function viewModel(name) {
    nav('');
    var r = RUN.leaderboard.filter(function (x) { return x.model === name; })[0];
    if (!r) return notFound('model ' + name);
    var m = main(crumbs([['Leaderboard', '#/'], [name]]) + '<h1>' + esc(name) + ' ' + badge(r.status) + '</h1>' +
      '<div class="cards">' + '<div class="card big"><div class="label">Index</div><div class="value">' + num(r.index, 2) + '</div><div class="small">' + ci(r.index_ci95, 2) + '</div></div>' +
      RUN.meta.tracks.map(function (t) { return '<div class="card"><div class="label">' + esc(TRACK_NAMES[t]) + '</div><div class="value">' + num(r.track_means[t], 3) + '</div><div class="small">' + ci((r.track_ci95 || {})[t], 3) + '</div></div>'; }).join('') +
      (r.cost ? '<div class="card" id="model-cost"><div class="label"><a href="' + href(['cost'], { model: name }) + '">Cost</a></div><div class="value">' + usd(r.cost.cost_usd) + '</div><div class="small">' + (r.cost.cost_usd == null ? missingText(r.cost) : 'per solved item ' + usd(r.cost.cost_per_solved_item)) + '</div></div>' : '') +
      '</div>' + reasons(r) + '<h2>Tasks</h2><div id="mt"></div>');
    var rows = [];
    RUN.meta.tracks.forEach(function (t) {
      ((RUN.meta.suite_items || {})[t] || []).forEach(function (item) { rows.push({ track: t, item: item, mean: (r.task_means || {})[item] }); });
    });
    Table(m.querySelector('#mt'), [
      { k: 'track', label: 'Track', f: function (x) { return esc(TRACK_NAMES[x.track]); } },
      { k: 'item', label: 'Task', f: function (x) { return '<a href="' + (x.track === 'solver' ? href(['task', x.item], { model: name }) : href(['items'], { item: x.item, model: name })) + '">' + esc(x.item) + '</a>'; } },
      { k: 'mean', label: 'Task mean', cls: 'num', f: function (x) { return num(x.mean, 3); } }
    ], rows, { href: function (x) { return x.track === 'solver' ? href(['task', x.item], { model: name }) : href(['items'], { item: x.item, model: name }); } });
  }

  // ---- tasks ----------------------------------------------------------------------------------
  function statusBar(counts) {
    var total = 0;
    Object.keys(counts || {}).forEach(function (k) { total += counts[k]; });
    if (!total) return '<span class="na">no records</span>';
    var h = '<span class="sbar" title="' + esc(Object.keys(counts).map(function (k) { return k + ': ' + counts[k]; }).join(', ')) + '">';
    STATUSES.concat(Object.keys(counts).filter(function (k) { return STATUSES.indexOf(k) < 0; })).forEach(function (s) {
      if (counts[s]) h += '<span class="seg st-' + esc(s) + '" style="width:' + (100 * counts[s] / total) + '%"></span>';
    });
    return h + '</span> <span class="small">' + Object.keys(counts).map(function (k) { return esc(k) + '&nbsp;' + counts[k]; }).join(' &middot; ') + '</span>';
  }

  function viewTasks() {
    nav('tasks');
    var m = main('<h1>Solver tasks</h1><p class="help">One row per task: the reference, each model&rsquo;s task mean, the record status counts. Click a task for its instances.</p><div id="tl"></div>');
    var models = RUN.leaderboard.map(function (r) { return r.model; });
    var cols = [
      { k: 'task', label: 'Task', f: function (t) { return '<a href="' + href(['task', t.task]) + '">' + esc(t.task) + '</a>'; } },
      { k: 'reference_id', label: 'Reference' },
      { k: 'direction', label: 'Direction' },
      { k: 'n_eligible', label: 'Instances', cls: 'num' }
    ];
    models.forEach(function (mm) {
      cols.push({ k: 'm_' + mm, label: esc(mm), cls: 'num', v: function (t) { return (t.models[mm] || {}).mean; }, f: function (t) { var v = (t.models[mm] || {}).mean; return '<span class="chip" style="background:' + scoreColor(v) + ';color:' + textOn(v) + '">' + num(v, 3) + '</span>'; } });
    });
    cols.push({ k: 'status_counts', label: 'Record statuses', nosort: true, f: function (t) { return statusBar(t.status_counts); } });
    Table(m.querySelector('#tl'), cols, RUN.tasks, { id: 'task-list', href: function (t) { return href(['task', t.task]); } });
  }

  function taskDelta(model, task) {
    if (!CMP || !CMP.deltas) return '';
    var d = CMP.deltas.filter(function (x) { return x.level === 'task' && x.name === task && x.model === model; })[0];
    if (!d) return '';
    return '<div class="small delta" data-model="' + esc(model) + '">vs baseline: &Delta; ' + num(d.delta, 3) + ' ' + ci(d.ci95, 3) +
      ' <a href="#/compare"><span class="pill v-' + esc(d.verdict.replace(' ', '-')) + '">' + esc(d.verdict) + '</span></a></div>';
  }

  function viewTask(name, params) {
    nav('tasks');
    var t = taskByName(name);
    if (!t) return notFound('task ' + name);
    main(crumbs([['Tasks', '#/tasks'], [name]]) + '<h1>' + esc(name) + '</h1><p class="loading">Loading records&hellip;</p>');
    loadTask(t.id).then(function (d) {
      if (currentRoute !== routeKey()) return;
      var board = RUN.leaderboard.map(function (r) { return r.model; });
      var models = Object.keys(t.models).sort(function (a, b) {
        var ia = board.indexOf(a), ib = board.indexOf(b);
        return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || (a < b ? -1 : a > b ? 1 : 0);
      });
      var h = crumbs([['Tasks', '#/tasks'], [name]]) + '<h1>' + esc(name) + ' <span class="sub">' + esc(t.kind || '') + ', ' + esc(t.direction || '') +
        ' &middot; reference ' + esc(t.reference_id || '?') + ' &middot; ' + esc(t.n_eligible == null ? '?' : t.n_eligible) + ' eligible instances</span></h1>';
      h += '<div class="cards">';
      models.forEach(function (mm) {
        var e = t.models[mm];
        var recs = d.records.filter(function (r) { return r.model === mm; });
        var ok = recs.filter(function (r) { return r.status === 'ok' && r.score != null; }).map(function (r) { return r.score; });
        var fails = recs.filter(function (r) { return r.status !== 'ok'; }).length;
        h += '<div class="card model-card' + (params.model === mm ? ' focus' : '') + '"><div class="label"><a href="' + href(['model', mm]) + '">' + esc(mm) + '</a></div>' +
          '<div class="value">' + num(e.mean, 3) + '</div>' + taskDelta(mm, name) +
          Object.keys(e.attempts).map(function (a) {
            var at = e.attempts[a];
            return '<div class="small">attempt ' + esc(a) + ': ' + num(at.relative_score, 3) + ' ' + badge(at.score_status) + ' ' + link(at.run_log, 'run.log') + (at.note ? '<br><span class="note">' + esc(at.note) + '</span>' : '') + '</div>';
          }).join('') +
          histogram(ok, fails, 230, 90) +
          '<div class="small">' + statusBar(recs.reduce(function (c, r) { c[r.status] = (c[r.status] || 0) + 1; return c; }, {})) + '</div></div>';
      });
      h += '</div><h2>Instances</h2><p class="help">Phi per instance and model (colour = score, a failure shows its status). Click a cell for every model&rsquo;s record on that instance; a model header sorts by its score.</p>' +
        '<div class="filters"><input id="isearch" type="search" placeholder="search instance" value="' + esc(params.q || '') + '"> ' +
        '<a href="' + href(['instances'], { task: name, model: params.model }) + '">all records as a table &rarr;</a></div><div id="imatrix"></div>';
      var m = main(h);
      var cols = [];
      models.forEach(function (mm) {
        Object.keys(t.models[mm].attempts).forEach(function (a) { cols.push({ model: mm, attempt: a }); });
      });
      var by = {};
      d.records.forEach(function (r) {
        var row = by[r.instance] || (by[r.instance] = { instance: r.instance, cells: {}, mu: r.mu, scale: r.scale });
        row.cells[r.model + '\u0000' + r.attempt] = r;
        if (row.mu == null) row.mu = r.mu;
      });
      var rows = Object.keys(by).sort().map(function (k) { return by[k]; });
      var tcols = [
        { k: 'instance', label: 'Instance', f: function (r) { return '<a href="' + href(['instance', name, r.instance]) + '" class="inst">' + esc(r.instance) + '</a>'; } },
        { k: 'mu', label: 'Ref. mean', cls: 'num', f: function (r) { return num(r.mu, 2); } },
        { k: 'scale', label: 'Scale', cls: 'num', f: function (r) { return num(r.scale, 2); } }
      ];
      cols.forEach(function (c) {
        var key = c.model + '\u0000' + c.attempt;
        tcols.push({ k: 'c_' + key, label: esc(c.model) + (cols.filter(function (x) { return x.model === c.model; }).length > 1 ? ' #' + esc(c.attempt) : ''), cls: 'num',
          v: function (r) { var x = r.cells[key]; return x ? (x.score == null ? -1 : x.score) : null; },
          f: function (r) {
            var x = r.cells[key];
            if (!x) return '<span class="na">&mdash;</span>';
            var label = x.status === 'ok' ? num(x.score, 3) : esc(x.status.replace(/_/g, ' '));
            return '<a class="cell-link' + (x.status === 'ok' ? '' : ' failed st-' + esc(x.status)) + '" href="' + href(['instance', name, r.instance], { model: c.model }) + '" data-instance="' + esc(r.instance) + '" data-model="' + esc(c.model) + '" style="' + (x.status === 'ok' ? 'background:' + scoreColor(x.score) + ';color:' + textOn(x.score) : '') + '" title="' + esc(x.status + (x.A != null ? ', A=' + x.A : '') + (x.z != null ? ', z=' + x.z.toFixed(3) : '')) + '">' + label + '</a>';
          } });
      });
      var focus = params.model ? cols.filter(function (c) { return c.model === params.model; })[0] : null;
      var tbl = Table(m.querySelector('#imatrix'), tcols, rows, { id: 'instance-matrix', noun: 'instances', count: true, page: 50,
        sort: focus ? 'c_' + focus.model + '\u0000' + focus.attempt : 'instance', dir: 1, firstDir: function (k) { return k.indexOf('c_') === 0 ? 1 : 1; } });
      var input = m.querySelector('#isearch');
      input.addEventListener('input', function () {
        var q = input.value.toLowerCase();
        tbl.setRows(rows.filter(function (r) { return r.instance.toLowerCase().indexOf(q) >= 0; }));
      });
      if (params.q) input.dispatchEvent(new Event('input'));
    });
  }

  // ---- instances (every record, filtered) ----------------------------------------------------
  function viewInstances(params) {
    nav('instances');
    var models = RUN.leaderboard.map(function (r) { return r.model; });
    RUN.tasks.forEach(function (t) { Object.keys(t.models).forEach(function (mm) { if (models.indexOf(mm) < 0) models.push(mm); }); });
    var opts = function (list, sel, all) {
      return '<option value="">' + esc(all) + '</option>' + list.map(function (x) { return '<option' + (x === sel ? ' selected' : '') + ' value="' + esc(x) + '">' + esc(x) + '</option>'; }).join('');
    };
    var m = main('<h1>Instances</h1><p class="help">Every Solver record. Filter by task, model and status; search matches the instance, the message and the stderr tail. Click a row for the instance.</p>' +
      '<div class="filters" id="filters">' +
      '<label>Task <select id="f-task">' + opts(RUN.tasks.map(function (t) { return t.task; }), params.task, 'all tasks') + '</select></label>' +
      '<label>Model <select id="f-model">' + opts(models, params.model, 'all models') + '</select></label>' +
      '<label>Status <select id="f-status">' + opts(STATUSES, params.status, 'any status') + '</select></label>' +
      '<label>Search <input id="f-q" type="search" value="' + esc(params.q || '') + '" placeholder="instance, message, stderr"></label></div><div id="rec"><p class="loading">Loading records&hellip;</p></div>');
    var want = params.task ? [taskByName(params.task)].filter(Boolean) : RUN.tasks;
    Promise.all(want.map(function (t) { return loadTask(t.id); })).then(function (ds) {
      if (currentRoute !== routeKey()) return;
      var all = [];
      ds.forEach(function (d) { all = all.concat(d.records); });
      var cols = [
        { k: 'task', label: 'Task' },
        { k: 'model', label: 'Model' },
        { k: 'attempt', label: 'Att.' },
        { k: 'instance', label: 'Instance', f: function (r) { return '<a href="' + href(['instance', r.task, r.instance], { model: r.model }) + '" class="inst">' + esc(r.instance) + '</a>'; } },
        { k: 'status', label: 'Status', f: function (r) { return badge(r.status); } },
        { k: 'A', label: 'A', cls: 'num', f: function (r) { return r.A == null && r.solved != null ? esc(r.solved) : num(r.A, 2); } },
        { k: 'mu', label: 'Ref. mean', cls: 'num', f: function (r) { return num(r.mu, 2); } },
        { k: 'z', label: 'z', cls: 'num', f: function (r) { return num(r.z, 3); } },
        { k: 'score', label: 'Phi', cls: 'num', f: function (r) { return num(r.score, 3); } },
        { k: 'wall_s', label: 'Wall s', cls: 'num', f: function (r) { return num(r.wall_s, 2); } },
        { k: 'peak_mem_mb', label: 'Mem MB', cls: 'num', f: function (r) { return num(r.peak_mem_mb, 1); } },
        { k: 'message', label: 'Message', cls: 'msg', f: function (r) { return esc(r.message.length > 90 ? r.message.slice(0, 90) + '\u2026' : r.message); } }
      ];
      var tbl = Table(m.querySelector('#rec'), cols, [], { id: 'records', noun: 'records', count: true, sort: 'task',
        href: function (r) { return href(['instance', r.task, r.instance], { model: r.model }); },
        attrs: function (r) { return 'data-task="' + esc(r.task) + '" data-model="' + esc(r.model) + '" data-instance="' + esc(r.instance) + '" data-status="' + esc(r.status) + '"'; } });
      function apply() {
        var p = { task: m.querySelector('#f-task').value, model: m.querySelector('#f-model').value, status: m.querySelector('#f-status').value, q: m.querySelector('#f-q').value };
        var q = p.q.toLowerCase();
        tbl.setRows(all.filter(function (r) {
          return (!p.task || r.task === p.task) && (!p.model || r.model === p.model) && (!p.status || r.status === p.status) &&
            (!q || r.instance.toLowerCase().indexOf(q) >= 0 || r.message.toLowerCase().indexOf(q) >= 0 || (r.stderr || '').toLowerCase().indexOf(q) >= 0);
        }));
        return p;
      }
      apply();
      ['#f-task', '#f-model', '#f-status'].forEach(function (sel) {
        m.querySelector(sel).addEventListener('change', function () {
          var p = apply();
          var target = href(['instances'], p);
          if (sel === '#f-task') { location.hash = target; return; }  // another task's records may need loading
          history.replaceState(null, '', target);
        });
      });
      var timer = null;
      m.querySelector('#f-q').addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { var p = apply(); history.replaceState(null, '', href(['instances'], p)); }, 120);
      });
    });
  }

  // ---- one instance: every model's record ------------------------------------------------------
  function viewInstance(task, inst, params) {
    nav('instances');
    var t = taskByName(task);
    if (!t) return notFound('task ' + task);
    main('<p class="loading">Loading&hellip;</p>');
    loadTask(t.id).then(function (d) {
      if (currentRoute !== routeKey()) return;
      var recs = d.records.filter(function (r) { return r.instance === inst; });
      if (!recs.length) return notFound('instance ' + inst + ' of ' + task);
      recs.sort(function (a, b) { return a.model < b.model ? -1 : a.model > b.model ? 1 : (a.attempt < b.attempt ? -1 : 1); });
      var mu = recs.map(function (r) { return r.mu; }).filter(function (x) { return x != null; })[0];
      var scale = recs.map(function (r) { return r.scale; }).filter(function (x) { return x != null; })[0];
      var h = crumbs([['Tasks', '#/tasks'], [task, href(['task', task])], [inst]]) +
        '<h1>' + esc(inst) + ' <span class="sub">' + esc(task) + ' &middot; reference mean ' + num(mu, 3) + ', scale ' + num(scale, 3) + ' &middot; ' + esc(t.direction || '') + '</span></h1>';
      if (CMP && CMP.changes) {
        var ch = CMP.changes.filter(function (c) { return c.task === task && c.instance === inst; });
        if (ch.length) {
          h += '<div class="banner">Changed against the baseline run: ' + ch.map(function (c) {
            return esc(c.model + ' #' + c.attempt) + ': ' + (c.kind === 'status' ? badge(c.baseline) + ' &rarr; ' + badge(c.candidate) : c.kind === 'value' ? 'value ' + num(c.baseline, 3) + ' &rarr; ' + num(c.candidate, 3) : esc(c.kind.replace(/_/g, ' ')));
          }).join('; ') + '</div>';
        }
      }
      h += '<div class="records">';
      recs.forEach(function (r) {
        var id = 'rec-' + r.model + '-' + r.attempt;
        h += '<section class="record' + (params.model === r.model ? ' focus' : '') + '" id="' + esc(id) + '" data-model="' + esc(r.model) + '" data-attempt="' + esc(r.attempt) + '">' +
          '<h2>' + esc(r.model) + ' <span class="sub">attempt ' + esc(r.attempt) + '</span> ' + badge(r.status) + (r.digest_ok === false ? ' <span class="badge st-crash">digest fails</span>' : '') + '</h2>' +
          '<div class="rec-grid"><div>' + kv({
            A: r.A, solved: r.solved, claimed: r.claimed, 'checker reward': r.reward, 'reference mean': r.mu, scale: r.scale, z: r.z, 'Phi (score)': r.score,
            'wall s': r.wall_s, 'CPU s': r.cpu_s, 'peak memory MB': r.peak_mem_mb, termination: r.termination, 'exit code': r.exit_code, signal: r.signal,
            sandbox: r.sandbox, limiter: r.limiter, 'in the reference': r.eligible
          }) + '<p class="msg-line"><b>message</b> ' + (r.message ? esc(r.message) : '<span class="na">none</span>') + '</p>' +
          '<p><b>stderr tail</b></p>' + (r.stderr ? '<pre class="stderr">' + esc(r.stderr) + '</pre>' : '<p class="na">empty (or not kept)</p>') +
          '<p class="links">' + link(r.record, 'record JSON') + ' ' + (r.certificate ? link(r.certificate, 'certificate') : '<span class="na">certificate not kept</span>') + ' ' + link((t.models[r.model] && t.models[r.model].attempts[r.attempt] || {}).run_log, 'run.log') + '</p>' +
          '</div><div><p><b>anytime trace</b></p>' + tracePlot(r.trace, r.mu, r.wall_s) + '</div></div></section>';
      });
      h += '</div>';
      main(h);
      if (params.model) {
        var el = document.querySelector('.record.focus');
        if (el && el.scrollIntoView) el.scrollIntoView({ block: 'start' });
      }
    });
  }

  // ---- constructions, proofs and the other non-solver items ---------------------------------
  function itemChecker(it) { return it.checker ? (it.checker.checker || '') : ''; }
  function itemVerdict(it) {
    var c = it.checker || {};
    if (it.track === 'construction' && it.source === 'pipeline') return c.status || c.score_status || '';
    if (c.complete === true) return 'complete';
    if (c.complete === false) return 'not complete';
    return c.status || '';
  }
  function viewItems(params) {
    nav('items');
    var tracks = RUN.meta.tracks.filter(function (t) { return t !== 'solver'; });
    var models = RUN.leaderboard.map(function (r) { return r.model; });
    var opts = function (list, sel, all, names) {
      return '<option value="">' + esc(all) + '</option>' + list.map(function (x) { return '<option' + (x === sel ? ' selected' : '') + ' value="' + esc(x) + '">' + esc(names ? names[x] : x) + '</option>'; }).join('');
    };
    var m = main('<h1>Constructions &amp; proofs</h1><p class="help">Every construction, theorem and open-conjecture attempt: the score it got, the checker that judged it and what it said. Click a row for the whole verdict.</p>' +
      '<div class="filters"><label>Track <select id="f-track">' + opts(tracks, params.track, 'all tracks', TRACK_NAMES) + '</select></label>' +
      '<label>Model <select id="f-model">' + opts(models, params.model, 'all models') + '</select></label>' +
      '<label>Search <input id="f-q" type="search" value="' + esc(params.q || params.item || '') + '" placeholder="item, checker, message"></label></div><div id="it"></div>');
    var cols = [
      { k: 'track', label: 'Track', f: function (r) { return esc(TRACK_NAMES[r.track] || r.track); } },
      { k: 'item', label: 'Item', f: function (r) { return '<a href="' + href(['item', r.model, r.item, r.attempt]) + '">' + esc(r.item) + '</a>'; } },
      { k: 'model', label: 'Model' },
      { k: 'attempt', label: 'Att.' },
      { k: 'score', label: 'Score', cls: 'num', f: function (r) { return '<span class="chip" style="background:' + scoreColor(r.score == null ? null : Math.min(1, r.score)) + ';color:' + textOn(r.score) + '">' + num(r.score, 3) + '</span>'; } },
      { k: 'score_status', label: 'Score status', f: function (r) { return badge(r.score_status); } },
      { k: 'verdict', label: 'Checker verdict', v: itemVerdict, f: function (r) { return esc(itemVerdict(r)); } },
      { k: 'checker', label: 'Checker', v: itemChecker, cls: 'msg', f: function (r) { var c = itemChecker(r); return esc(c.length > 60 ? c.slice(0, 60) + '\u2026' : c); } },
      { k: 'note', label: 'Note / message', cls: 'msg', f: function (r) { var s = (r.checker && r.checker.message) || r.note || ''; return esc(s.length > 80 ? s.slice(0, 80) + '\u2026' : s); } }
    ];
    var tbl = Table(m.querySelector('#it'), cols, [], { id: 'items', noun: 'attempts', count: true, sort: 'track',
      href: function (r) { return href(['item', r.model, r.item, r.attempt]); },
      attrs: function (r) { return 'data-item="' + esc(r.item) + '" data-model="' + esc(r.model) + '"'; } });
    function apply() {
      var tr = m.querySelector('#f-track').value, mo = m.querySelector('#f-model').value, q = m.querySelector('#f-q').value.toLowerCase();
      tbl.setRows(RUN.items.filter(function (r) {
        return (!tr || r.track === tr) && (!mo || r.model === mo) &&
          (!q || (r.item + ' ' + itemChecker(r) + ' ' + r.note + ' ' + ((r.checker || {}).message || '')).toLowerCase().indexOf(q) >= 0);
      }));
      history.replaceState(null, '', href(['items'], { track: tr, model: mo, q: m.querySelector('#f-q').value }));
    }
    apply();
    ['#f-track', '#f-model'].forEach(function (s) { m.querySelector(s).addEventListener('change', apply); });
    m.querySelector('#f-q').addEventListener('input', apply);
  }

  function viewItem(model, item, attempt) {
    nav('items');
    var it = RUN.items.filter(function (r) { return r.model === model && r.item === item && r.attempt === attempt; })[0];
    if (!it) return notFound('attempt ' + model + '/' + item + '/' + attempt);
    var h = crumbs([['Constructions & proofs', '#/items'], [item, href(['items'], { item: item })], [model + ' #' + attempt]]) +
      '<h1>' + esc(item) + ' <span class="sub">' + esc(TRACK_NAMES[it.track] || it.track) + ' &middot; ' + esc(model) + ' &middot; attempt ' + esc(attempt) + '</span> ' + badge(it.score_status) + '</h1>' +
      '<div class="cards"><div class="card big"><div class="label">Score</div><div class="value">' + num(it.score, 4) + '</div><div class="small">' + esc(it.score_type || '') + '</div></div>' +
      '<div class="card"><div class="label">Checker verdict</div><div class="value small-value">' + esc(itemVerdict(it) || '?') + '</div><div class="small">' + esc(it.source ? 'from the ' + it.source : 'no checker output found') + '</div></div>' +
      '<div class="card"><div class="label">Adoption</div><div class="value small-value">' + esc(it.adoption_status || '') + '</div></div></div>' +
      (it.note ? '<p class="note-line"><b>note</b> ' + esc(it.note) + '</p>' : '') +
      '<h2>Checker output</h2>' + (it.checker ? kv(it.checker) : '<p class="na">none</p>');
    if (it.record) {
      var r = it.record;
      h += '<h2>Run record</h2><div class="rec-grid"><div>' + kv(r, ['status', 'A', 'claimed', 'reward', 'message', 'wall_s', 'cpu_s', 'peak_mem_mb', 'exit_code', 'signal', 'termination', 'sandbox', 'limiter', 'candidate_hash']) + '</div><div><p><b>stderr tail</b></p>' +
        (r.stderr ? '<pre class="stderr">' + esc(r.stderr) + '</pre>' : '<p class="na">empty (or not kept)</p>') + '</div></div>';
    }
    h += '<p class="links">' + Object.keys(it.links || {}).map(function (k) { return link(it.links[k], k); }).join(' ') + '</p>';
    main(h);
  }

  // ---- OR-Space --------------------------------------------------------------------------------
  function viewOrspace(params) {
    nav('orspace');
    var docs = RUN.orspace || [];
    var h = '<h1>OR-Space</h1><p class="help">Per run and stage condition: the Build/Revise objective checks (failure modes) and the Explain judgments (rationale, cost). Click a row for its details.</p>';
    docs.forEach(function (d, i) {
      h += '<section class="orsp"><h2>' + esc(d.run) + ' <span class="sub">' + esc(d.condition) + ' &middot; ' + esc(d.kind) + '</span> ' + link(d.file, d.kind + '.json') + '</h2>' + kv(d.summary) +
        (d.failure_modes ? '<p><b>failure modes</b> ' + Object.keys(d.failure_modes).map(function (k) { return esc(k) + '&nbsp;' + d.failure_modes[k]; }).join(' &middot; ') + '</p>' : '') +
        '<div id="orsp-' + i + '"></div><div class="detail" id="orsp-d-' + i + '"></div></section>';
    });
    var m = main(h);
    docs.forEach(function (d, i) {
      var keys = d.kind === 'leaderboard' ?
        ['workspace_id', 'condition', 'build_pass_at_1', 'revise_pass_at_1', 'explain_mean', 'interface_build', 'interface_revise', 'legacy_code', 'attributions'] :
        d.kind === 'objectives' ?
        ['workspace_id', 'mode', 'difficulty', 'status', 'objective', 'reference_objective', 'relative_error', 'passed', 'failure_mode', 'attribution', 'disputed', 'passed_any_evidenced', 'solver'] :
        ['workspace_id', 'status', 'answer_status', 'score', 'coverage', 'reasoning', 'grounding', 'answer_quality', 'hallucination_penalty', 'unfaithful'];
      var cols = keys.map(function (k) {
        return { k: k, label: esc(d.kind === 'leaderboard' && k === 'workspace_id' ? 'run' : k.replace(/_/g, ' ')), cls: typeof (d.rows[0] || {})[k] === 'number' ? 'num' : '',
          f: function (r) { var v = r[k]; return typeof v === 'number' ? num(v, 3) : (k === 'status' || k === 'failure_mode' || k === 'attribution' ? badge(v) : esc(v)); } };
      });
      cols.push({ k: 'cost', label: 'cost', nosort: true, f: function (r) { var u = r.judge_usage; return u ? esc(u.cost_usd != null ? '$' + u.cost_usd : JSON.stringify(u)) : ''; } });
      if (d.rows.some(function (r) { return r.generation; })) {
        // the agent's generation of this workspace (tcsexam agents generate): how it stopped, its transcript
        cols.push({ k: 'agent', label: 'agent stop', nosort: true, f: function (r) { return r.generation ? badge(r.generation.stop_reason) : ''; } });
        cols.push({ k: 'transcript', label: 'transcript', nosort: true, f: function (r) {
          var l = r.generation_links || {};
          return Object.keys(l).map(function (k) { return link(l[k], k); }).join(' ');
        } });
      }
      var tbl = Table(m.querySelector('#orsp-' + i), cols, d.rows, { noun: 'workspaces', count: true, attrs: function (r) { return 'data-ws="' + esc(r.workspace_id) + '"'; } });
      m.querySelector('#orsp-' + i).addEventListener('click', function (ev) {
        var tr = ev.target.closest('tr[data-ws]');
        if (!tr) return;
        var r = d.rows.filter(function (x) { return x.workspace_id === tr.getAttribute('data-ws'); })[0];
        m.querySelector('#orsp-d-' + i).innerHTML = '<h3>' + esc(r.workspace_id) + '</h3>' + kv(r);
      });
      void tbl;
    });
  }

  // ---- Index against cost (index.json's cost sections, generation.csv) -------------------------
  function usd(v) { return v == null ? '<span class="na">unknown</span>' : '$' + (v < 0.01 && v > 0 ? v.toExponential(2) : v.toFixed(v < 10 ? 4 : 2)); }
  function missingText(c) {
    if (!c || !c.cost_missing) return '';
    return Object.keys(c.cost_missing).filter(function (k) { return c.cost_missing[k]; }).map(function (k) { return esc(k.replace(/_/g, ' ')) + '&nbsp;' + c.cost_missing[k]; }).join(', ');
  }
  function costPlot(models, front) {
    // Index (y) against cost in USD (x, log scale when the costs span more than a factor of 20)
    var pts = models.filter(function (r) { return r.index != null && r.cost && r.cost.cost_usd != null; });
    var w = 560, h = 300, L = 52, R = 16, Tp = 12, B = 38;
    if (!pts.length) return '<p class="na" id="cost-plot">No model has both an Index and a known cost yet.</p>';
    var cs = pts.map(function (r) { return r.cost.cost_usd; }), is = pts.map(function (r) { return r.index; });
    var cmin = Math.min.apply(null, cs), cmax = Math.max.apply(null, cs);
    var log = cmin > 0 && cmax / cmin > 20;
    function tx(c) { return log ? Math.log10(c) : c; }
    var x0 = tx(log ? cmin : 0), x1 = tx(cmax); if (x1 <= x0) x1 = x0 + 1;
    var y0 = 0, y1 = Math.max(100, Math.max.apply(null, is));
    function X(c) { return L + (tx(c) - x0) / (x1 - x0) * (w - L - R); }
    function Y(v) { return Tp + (1 - (v - y0) / (y1 - y0)) * (h - Tp - B); }
    var s = '<svg id="cost-plot" class="costplot" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '" role="img" aria-label="Index against cost">';
    s += '<line x1="' + L + '" y1="' + (h - B) + '" x2="' + (w - R) + '" y2="' + (h - B) + '" class="axis"/><line x1="' + L + '" y1="' + Tp + '" x2="' + L + '" y2="' + (h - B) + '" class="axis"/>';
    [y0, y1 / 2, y1].forEach(function (v) { s += '<text x="' + (L - 6) + '" y="' + (Y(v) + 4) + '" text-anchor="end" class="tick">' + v.toFixed(0) + '</text>'; });
    [x0, (x0 + x1) / 2, x1].forEach(function (t) { var c = log ? Math.pow(10, t) : t; s += '<text x="' + X(c) + '" y="' + (h - B + 16) + '" text-anchor="middle" class="tick">$' + (c < 1 ? c.toPrecision(2) : c.toFixed(2)) + '</text>'; });
    s += '<text x="' + ((L + w - R) / 2) + '" y="' + (h - 4) + '" text-anchor="middle" class="tick">cost (USD' + (log ? ', log scale' : '') + ')</text>';
    s += '<text x="12" y="' + ((Tp + h - B) / 2) + '" transform="rotate(-90 12 ' + ((Tp + h - B) / 2) + ')" text-anchor="middle" class="tick">Index</text>';
    var fp = pts.filter(function (r) { return front.indexOf(r.model) >= 0; }).sort(function (a, b) { return a.cost.cost_usd - b.cost.cost_usd; });
    if (fp.length > 1) s += '<polyline class="front" points="' + fp.map(function (r) { return X(r.cost.cost_usd) + ',' + Y(r.index); }).join(' ') + '"/>';
    pts.forEach(function (r) {
      var on = front.indexOf(r.model) >= 0;
      s += '<g class="pt' + (on ? ' on-front' : '') + '" data-model="' + esc(r.model) + '" data-cost="' + r.cost.cost_usd + '" data-index="' + r.index + '">' +
        '<circle cx="' + X(r.cost.cost_usd) + '" cy="' + Y(r.index) + '" r="5"><title>' + esc(r.model) + ': Index ' + r.index.toFixed(2) + ', $' + r.cost.cost_usd.toFixed(4) + '</title></circle>' +
        (X(r.cost.cost_usd) > w - 120 ? '<text x="' + (X(r.cost.cost_usd) - 7) + '" text-anchor="end"' : '<text x="' + (X(r.cost.cost_usd) + 7) + '"') +
        ' y="' + (Y(r.index) - 6) + '" class="lbl">' + esc(r.model) + '</text></g>';
    });
    return s + '</svg>';
  }
  function viewCost(params) {
    nav('cost');
    var C = RUN.cost || {}, front = C.pareto_front || [];
    var models = RUN.leaderboard;
    var h = '<h1>Index against cost</h1><p class="help">Each model\'s Index and what its adopted attempts cost (the agents\' generation records, ' + link(C.file, 'generation.csv') + '). ' +
      'The Pareto front joins the models no other model beats on both. A model with missing data has no point: its cost is unknown, never free. ' +
      'An item is solved when its task mean reaches ' + Object.keys(C.solved_at || {}).map(function (t) { return esc(TRACK_NAMES[t] || t) + '&nbsp;' + C.solved_at[t]; }).join(', ') + '.</p>' +
      costPlot(models, front) + '<h2>Models</h2><div id="cost-models"></div><h2>Attempts</h2><div id="cost-attempts"></div>';
    var m = main(h);
    function c(r) { return r.cost || {}; }
    Table(m.querySelector('#cost-models'), [
      { k: 'model', label: 'Model', f: function (r) { return '<a href="' + href(['model', r.model]) + '">' + esc(r.model) + '</a>' + (front.indexOf(r.model) >= 0 ? ' <span class="pill">Pareto</span>' : ''); } },
      { k: 'index', label: 'Index', cls: 'num', f: function (r) { return num(r.index, 2); } },
      { k: 'cost_usd', label: 'Cost', cls: 'num', v: function (r) { return c(r).cost_usd; }, f: function (r) { return '<span data-model="' + esc(r.model) + '" data-field="cost_usd" data-value="' + (c(r).cost_usd == null ? '' : c(r).cost_usd) + '">' + usd(c(r).cost_usd) + '</span>'; } },
      { k: 'missing', label: 'Missing', nosort: true, f: function (r) { return r.cost ? '<span data-model="' + esc(r.model) + '" data-field="cost_missing">' + missingText(r.cost) + '</span>' : '<span class="na">not scored with costs</span>'; } },
      { k: 'known', label: 'Known part', cls: 'num', v: function (r) { return c(r).cost_usd_known; }, f: function (r) { return c(r).cost_usd == null && c(r).priced ? usd(c(r).cost_usd_known) : ''; } },
      { k: 'tokens', label: 'Tokens in / out', cls: 'num', v: function (r) { return c(r).total_tokens; }, f: function (r) { return c(r).input_tokens == null ? '<span class="na">unknown</span>' : c(r).input_tokens + ' / ' + c(r).output_tokens; } },
      { k: 'feedback', label: 'Feedback calls', cls: 'num', v: function (r) { return c(r).feedback_calls; }, f: function (r) { return c(r).feedback_calls == null ? '<span class="na">unknown</span>' : c(r).feedback_calls; } },
      { k: 'wall', label: 'Wall time (s)', cls: 'num', v: function (r) { return c(r).wall_time_s; }, f: function (r) { return num(c(r).wall_time_s, 0); } },
      { k: 'solved', label: 'Solved items', cls: 'num', v: function (r) { return c(r).solved_items; }, f: function (r) { return r.cost ? c(r).solved_items + '/' + c(r).items : ''; } },
      { k: 'per', label: 'Cost per solved item', cls: 'num', v: function (r) { return c(r).cost_per_solved_item; }, f: function (r) { return usd(c(r).cost_per_solved_item); } }
    ], models, { id: 'cost-table', sort: 'index', dir: -1 });
    var rows = (C.attempts || []).filter(function (a) { return !params.model || a.model === params.model; });
    Table(m.querySelector('#cost-attempts'), [
      { k: 'model', label: 'Model', f: function (a) { return esc(a.model); } },
      { k: 'track', label: 'Track', f: function (a) { return esc(TRACK_NAMES[a.track] || a.track); } },
      { k: 'item', label: 'Item', f: function (a) { return esc(a.item); } },
      { k: 'attempt', label: '#', f: function (a) { return esc(a.attempt); } },
      { k: 'cost_usd', label: 'Cost', cls: 'num', f: function (a) { return a.cost_missing ? '<span class="na">' + esc(a.cost_missing.replace(/_/g, ' ')) + '</span>' : usd(a.cost_usd); } },
      { k: 'input_tokens', label: 'Tokens in', cls: 'num', f: function (a) { return a.input_tokens == null ? '' : a.input_tokens; } },
      { k: 'output_tokens', label: 'Tokens out', cls: 'num', f: function (a) { return a.output_tokens == null ? '' : a.output_tokens; } },
      { k: 'feedback_calls', label: 'Feedback', cls: 'num', f: function (a) { return a.feedback_calls == null ? '' : a.feedback_calls; } },
      { k: 'wall_time_s', label: 'Wall (s)', cls: 'num', f: function (a) { return num(a.wall_time_s, 1); } },
      { k: 'stop_reason', label: 'Stop', f: function (a) { return a.stop_reason ? badge(a.stop_reason) : ''; } },
      { k: 'links', label: 'Transcript', nosort: true, f: function (a) {
        var l = a.links || {};
        var out = Object.keys(l).map(function (k) { return link(l[k], k); }).join(' ');
        if (!l.transcript && a.transcript_path) out += ' <span class="na" title="' + esc(a.transcript_path) + '">transcript not here</span>';
        return '<span class="tr-links" data-attempt="' + esc([a.model, a.item, a.attempt].join('/')) + '">' + out + '</span>';
      } }
    ], rows, { noun: 'attempts', count: true, id: 'cost-attempts-table' });
  }

  // ---- provenance and issues -----------------------------------------------------------------
  function viewProvenance() {
    nav('provenance');
    var p = RUN.provenance;
    var links = Object.keys(RUN.meta.links || {}).map(function (k) { return link(RUN.meta.links[k], k); }).join(' ');
    if (!p) { main('<h1>Provenance</h1><p class="na">No manifest.json in this run.</p><p class="links">' + links + '</p>'); return; }
    var h = '<h1>Provenance</h1><p class="help">From the run&rsquo;s manifest.json (per-instance digests are in the file). ' + links + '</p>';
    h += '<div class="two"><div><h2>Run</h2>' + kv(Object.assign({}, p.run || {}, { reference: (p.reference || {}).id, 'reference file': (p.reference || {}).file, 'reference sha256': (p.reference || {}).sha256 })) +
      '<h2>tcsexam</h2>' + kv(p.tcsexam || {}) + '<h2>Execution</h2>' + kv(p.execution || {}) + '</div>' +
      '<div><h2>Software</h2>' + kv(p.software || {}) + '<h2>Machine</h2>' + kv(p.machine || {}) + '<h2>Sources</h2>' + kv(p.sources || {}) + '</div></div>';
    h += '<h2>Solver tasks</h2><div id="pt"></div><h2>Candidates</h2><div id="pc"></div>';
    var m = main(h);
    var trows = Object.keys(p.tasks || {}).map(function (k) { return Object.assign({ task: k }, p.tasks[k]); });
    Table(m.querySelector('#pt'), [
      { k: 'task', label: 'Task' }, { k: 'file', label: 'Task file' },
      { k: 'sha256', label: 'sha256', f: function (r) { return '<code>' + shortHash(r.sha256) + '</code>'; } },
      { k: 'limits', label: 'Limits', nosort: true, f: function (r) { return esc(Object.keys(r.limits || {}).filter(function (k) { return r.limits[k] != null; }).map(function (k) { return k + '=' + r.limits[k]; }).join(', ')); } },
      { k: 'n_instances', label: 'Instances', cls: 'num' }
    ], trows);
    var crows = [];
    Object.keys(p.candidates || {}).forEach(function (mo) {
      Object.keys(p.candidates[mo]).forEach(function (ta) {
        Object.keys(p.candidates[mo][ta]).forEach(function (a) { crows.push(Object.assign({ model: mo, task: ta, attempt: a }, p.candidates[mo][ta][a])); });
      });
    });
    Table(m.querySelector('#pc'), [
      { k: 'model', label: 'Model' }, { k: 'task', label: 'Task' }, { k: 'attempt', label: 'Att.' },
      { k: 'candidate_hash', label: 'Candidate hash', f: function (r) { return '<code>' + shortHash(Array.isArray(r.candidate_hash) ? r.candidate_hash.join(',') : r.candidate_hash) + '</code>'; } },
      { k: 'records', label: 'Records', cls: 'num' },
      { k: 'statuses', label: 'Statuses', nosort: true, f: function (r) { return statusBar(r.statuses); } },
      { k: 'solver_wall_s', label: 'Wall s', cls: 'num', f: function (r) { return num(r.solver_wall_s, 1); } }
    ], crows, { noun: 'candidates', count: true });
  }

  function viewIssues() {
    nav('issues');
    var m = main('<h1>Issues</h1><p class="help">What keeps the Index from being complete or trusted: missing or failed attempts, an unverified reference, records failing their digest, derived files set aside.</p><div id="is"></div>');
    Table(m.querySelector('#is'), [
      { k: 'kind', label: 'Kind', f: function (r) { return badge(r.kind); } },
      { k: 'model', label: 'Model' },
      { k: 'where', label: 'Where', v: function (r) { return (r.item || r.task || '') + (r.instance ? '/' + r.instance : ''); },
        f: function (r) {
          if (r.instance && r.task) return '<a href="' + href(['instance', r.task, r.instance], { model: r.model }) + '">' + esc(r.task + ' / ' + r.instance) + '</a>';
          if (r.item && r.track === 'solver') return '<a href="' + href(['task', r.item], { model: r.model }) + '">' + esc(r.item) + '</a>';
          if (r.item) return '<a href="' + href(['items'], { item: r.item, model: r.model }) + '">' + esc(r.item) + '</a>';
          return '';
        } },
      { k: 'attempt', label: 'Att.' },
      { k: 'message', label: 'Message', cls: 'msg', f: function (r) { return esc(r.message || '') + (r.files ? '<br><span class="small">' + esc(r.files.join(', ')) + '</span>' : ''); } }
    ], RUN.issues, { id: 'issues', empty: 'no issues: the run is complete and every record passed its digest', noun: 'issues', count: true });
  }

  // ---- comparison --------------------------------------------------------------------------------
  function viewCompare(params) {
    nav('compare');
    if (!CMP) { main('<h1>Comparison</h1><p class="na">This site shows one run. Build one with <code>tcsexam view BASELINE CANDIDATE --output DIR</code>.</p>'); return; }
    var b = CMP.baseline || {}, c = CMP.candidate || {};
    var h = '<h1>Comparison <span class="pill v-' + esc(CMP.verdict) + '" id="verdict">' + esc(CMP.verdict) + '</span></h1>' +
      '<p class="help">Baseline <code>' + esc(b.path) + '</code> against candidate <code>' + esc(c.path) + '</code> (this site&rsquo;s run). Deltas are candidate &minus; baseline with paired bootstrap 95% intervals.</p>' +
      '<ul class="reasons big">' + (CMP.reasons || []).map(function (r) { return '<li>' + esc(r) + '</li>'; }).join('') + '</ul>';
    var inputs = (CMP.inputs || {}).differ || [];
    h += '<p><b>Inputs that differ</b> ' + (inputs.length ? inputs.map(function (x) { return '<span class="chip">' + esc(x) + '</span>'; }).join(' ') : '<span class="na">none</span>') + '</p>';
    var trans = CMP.status_changes || {};
    if (Object.keys(trans).length) h += '<p><b>Status transitions</b> ' + Object.keys(trans).map(function (k) { return '<span class="chip">' + esc(k) + ' &times; ' + trans[k] + '</span>'; }).join(' ') + '</p>';
    h += '<h2>Instances that changed <span class="sub">status changes first</span></h2><div id="chg"></div>' +
      '<h2>Per model: Index, tracks and tasks</h2><div class="filters"><label>Show <select id="f-v"><option value="">every delta</option><option value="differs">differs</option><option value="within noise">within noise</option><option value="identical">identical</option></select></label></div><div id="dl"></div>';
    var m = main(h);
    Table(m.querySelector('#chg'), [
      { k: 'kind', label: 'Change', f: function (r) { return esc(r.kind.replace(/_/g, ' ')); }, v: function (r) { return { status: 0, only_in_baseline: 1, only_in_candidate: 1, value: 2 }[r.kind]; } },
      { k: 'model', label: 'Model' }, { k: 'task', label: 'Task' }, { k: 'attempt', label: 'Att.' },
      { k: 'instance', label: 'Instance', f: function (r) { return '<a href="' + href(['instance', r.task, r.instance], { model: r.model }) + '">' + esc(r.instance) + '</a>'; } },
      { k: 'baseline', label: 'Baseline', f: function (r) { return r.kind === 'status' ? badge(r.baseline) : num(r.baseline, 3); } },
      { k: 'candidate', label: 'Candidate', f: function (r) { return r.kind === 'status' ? badge(r.candidate) : num(r.candidate, 3); } },
      { k: 'score_delta', label: '&Delta; Phi', cls: 'num', f: function (r) { return num(r.score_delta, 3); } }
    ], CMP.changes || [], { id: 'changes', noun: 'changed instances', count: true, empty: 'no instance changed',
      href: function (r) { return href(['instance', r.task, r.instance], { model: r.model }); },
      attrs: function (r) { return 'data-kind="' + esc(r.kind) + '" data-instance="' + esc(r.instance) + '"'; } });
    var vrank = { differs: 0, 'within noise': 1, identical: 2 };
    var deltas = (CMP.deltas || []).slice();
    var dt = Table(m.querySelector('#dl'), [
      { k: 'verdict', label: 'Verdict', v: function (r) { return vrank[r.verdict]; }, f: function (r) { return '<span class="pill v-' + esc(r.verdict.replace(' ', '-')) + '">' + esc(r.verdict) + '</span>'; } },
      { k: 'model', label: 'Model' }, { k: 'level', label: 'Level' },
      { k: 'name', label: 'Name', f: function (r) { return r.level === 'task' && taskByName(r.name) ? '<a href="' + href(['task', r.name], { model: r.model }) + '">' + esc(r.name) + '</a>' : esc(TRACK_NAMES[r.name] || r.name); } },
      { k: 'baseline', label: 'Baseline', cls: 'num', f: function (r) { return num(r.baseline, 4); } },
      { k: 'candidate', label: 'Candidate', cls: 'num', f: function (r) { return num(r.candidate, 4); } },
      { k: 'delta', label: '&Delta;', cls: 'num', f: function (r) { return num(r.delta, 4); } },
      { k: 'ci95', label: '95% interval', nosort: true, f: function (r) { return ci(r.ci95, 4); } }
    ], deltas, { id: 'deltas', sort: 'verdict', noun: 'deltas', count: true });
    m.querySelector('#f-v').addEventListener('change', function () {
      var v = m.querySelector('#f-v').value;
      dt.setRows(deltas.filter(function (r) { return !v || r.verdict === v; }));
    });
    void params;
  }

  function notFound(what) { main('<h1>Not found</h1><p>No ' + esc(what) + ' in this run. <a href="#/">Back to the leaderboard</a>.</p>'); }

  // ---- routing -----------------------------------------------------------------------------
  var currentRoute = null;
  function routeKey() { return location.hash || '#/'; }
  function parse() {
    var h = (location.hash || '#/').slice(1);
    var qi = h.indexOf('?');
    var path = qi >= 0 ? h.slice(0, qi) : h, query = qi >= 0 ? h.slice(qi + 1) : '';
    var parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    var params = {};
    query.split('&').filter(Boolean).forEach(function (kvp) {
      var i = kvp.indexOf('=');
      params[decodeURIComponent(i < 0 ? kvp : kvp.slice(0, i))] = i < 0 ? '' : decodeURIComponent(kvp.slice(i + 1));
    });
    return { parts: parts, params: params };
  }
  function render() {
    currentRoute = routeKey();
    var r = parse(), p = r.parts;
    window.scrollTo(0, 0);
    switch (p[0] || '') {
      case '': return viewLeaderboard();
      case 'model': return viewModel(p[1]);
      case 'tasks': return viewTasks();
      case 'task': return viewTask(p[1], r.params);
      case 'instances': return viewInstances(r.params);
      case 'instance': return viewInstance(p[1], p[2], r.params);
      case 'items': return viewItems(r.params);
      case 'item': return viewItem(p[1], p[2], p[3]);
      case 'orspace': return viewOrspace(r.params);
      case 'cost': return viewCost(r.params);
      case 'provenance': return viewProvenance();
      case 'issues': return viewIssues();
      case 'compare': return viewCompare(r.params);
      default: return notFound('page ' + p.join('/'));
    }
  }
  var started = false;
  function start() {
    if (started || !RUN || CMP === undefined) return;
    started = true;
    document.getElementById('run-title').textContent = RUN.meta.title;
    document.getElementById('run-status').innerHTML = badge(RUN.meta.status || 'not scored');
    document.getElementById('foot').innerHTML = 'tcsexam ' + esc(RUN.meta.view_version) + ' &middot; ' + esc(RUN.meta.path) + ' &middot; ' + RUN.meta.n_records + ' Solver records &middot; ' +
      Object.keys(RUN.meta.links || {}).map(function (k) { return link(RUN.meta.links[k], k); }).join(' ');
    window.addEventListener('hashchange', render);
    render();
    document.body.setAttribute('data-ready', '1');
  }
})();

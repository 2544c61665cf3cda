// egsolve's web page: the front page (server, jobs, submit form) and the job page.
// Plain JavaScript against the JSON API (openapi.yaml); plots are inline SVG built here.
// The bearer token lives in sessionStorage (this tab only) and goes out as a header.
'use strict';
(function () {
  const ROOT = new URL('..', document.currentScript.src);
  const TOKEN_KEY = 'egsolve-token';
  const SVG = 'http://www.w3.org/2000/svg';
  const FINISHED = ['succeeded', 'failed', 'cancelled'];
  const PAGE_SIZE = 50;
  const $ = (id) => document.getElementById(id);

  // ---- API ---------------------------------------------------------------------------
  function token() { return sessionStorage.getItem(TOKEN_KEY); }

  class ApiError extends Error {
    constructor(status, problem) {
      super(problem.detail || problem.title || 'HTTP ' + status);
      this.status = status;
      this.problem = problem;
    }
  }

  async function api(path, options = {}) {
    const headers = Object.assign({}, options.headers);
    const t = options.token !== undefined ? options.token : token();
    if (t) headers.Authorization = 'Bearer ' + t;
    const res = await fetch(new URL(path, ROOT), { method: options.method || 'GET', headers, body: options.body });
    if (!res.ok) {
      let problem;
      try { problem = await res.json(); } catch (e) { problem = { title: res.statusText }; }
      throw new ApiError(res.status, problem);
    }
    return options.raw ? res : res.json();
  }

  // ---- small helpers -------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function clear(node) { while (node.firstChild) node.firstChild.remove(); return node; }
  function num(n) { return n === null || n === undefined ? '–' : Number(n).toLocaleString('en'); }
  function bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }
  function ago(iso) {
    if (!iso) return '–';
    const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (s < 60) return Math.round(s) + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return new Date(iso).toLocaleDateString();
  }
  function seconds(s) { return s < 1 ? (s * 1000).toFixed(1) + ' ms' : s.toFixed(2) + ' s'; }
  function credit(c) { return c === null ? '⊤' : num(c); }
  function shortId(id) { return id.slice(0, 8) + '…' + id.slice(-4); }
  function jobLink(id, text) { return el('a', { href: new URL('jobs/' + id, ROOT).pathname }, text || shortId(id)); }
  function stateBadge(state) { return el('span', { class: 'state ' + state }, state); }
  function showError(e) {
    const box = $('error');
    if (!e) { box.hidden = true; return; }
    let text = e.message || String(e);
    const p = e.problem || {};
    if (p.line) text += ' (line ' + p.line + ', column ' + p.column + ')';
    box.textContent = text;
    box.hidden = false;
  }
  function newKey() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }
  // ---- what a job's game and answer are ----------------------------------------------
  // The summary says once the job is solved; before that the options tell where they can
  // (a .gm file is a parity game, an .mpg file an energy game). null: not known yet.
  function isParity(job) {
    if (job.summary) return !!job.summary.parity;
    if (job.options.format === 'gm' || job.options.backend === 'parity') return true;
    return job.options.format === 'mpg' ? false : null;
  }
  // Whether the answer has credits (true), has none (false: a parity game answered by the
  // parity solver, winners and strategies only), or null while that is not known.
  function hasCredits(job) {
    if (job.summary) return job.summary.credits_computed !== false;
    if (job.result_formats) return job.result_formats.includes('text');
    const parity = isParity(job);
    if (parity === false) return true;
    if (parity && (job.options.backend === 'parity' || (job.options.backend === 'auto' && !job.options.credits))) return false;
    return null;
  }
  // The progress counter counts lifts for the energy solvers, work steps for the parity solver.
  function workUnit(job) { return hasCredits(job) === false ? 'steps' : 'lifts'; }
  function progressText(job) {
    if (job.state === 'queued' && job.queue_position !== null) return '#' + (job.queue_position + 1) + ' in queue';
    if (job.progress) return num(job.progress.lifts) + ' ' + workUnit(job);
    return '';
  }
  // The downloads the page offers, of those the job's answer has (result_formats: text only
  // for answers with credits; binary is for programs).
  const DOWNLOADS = { json: 'JSON', text: 'text', paritysol: 'paritysol' };
  function downloadLinks(node, job) {
    const formats = (job.result_formats || []).filter((f) => f in DOWNLOADS);
    formats.forEach((f, i) => {
      if (i) node.append(' · ');
      node.append(resultLink(el('a', { id: 'result-' + f }, DOWNLOADS[f]), job.id, f));
    });
    return node;
  }
  // Links that download a result: plain links with auth off, fetched with the token else.
  function resultLink(a, id, format) {
    a.href = new URL('v1/jobs/' + id + '/result?format=' + format, ROOT).href;
    a.setAttribute('download', id + (format === 'json' ? '.json' : format === 'text' ? '.txt' : '.sol'));
    a.onclick = async (event) => {
      if (!token()) return;
      event.preventDefault();
      try {
        const res = await api(a.href, { raw: true });
        const url = URL.createObjectURL(await res.blob());
        const tmp = el('a', { href: url, download: a.getAttribute('download') });
        document.body.append(tmp); tmp.click(); tmp.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
      } catch (e) { showError(e); }
    };
    return a;
  }

  // ---- sign-in ---------------------------------------------------------------------------
  // Resolves to the caller ({user, role, auth, by_reference}), or null while a token is needed.
  async function whoami(candidate) {
    const me = await api('v1/whoami', { token: candidate });
    return me.user === null ? null : me;
  }
  async function signIn(onChange) {
    const form = $('login');
    const show = (me) => {
      form.hidden = !!me;
      $('who').hidden = !me;
      $('logout').hidden = !me || !me.auth;
      if (me) $('who').textContent = me.auth ? me.user + (me.role === 'admin' ? ' (admin)' : '') : 'auth off: every job';
      onChange(me);
    };
    form.onsubmit = async (event) => {
      event.preventDefault();
      const candidate = $('token').value.trim();
      if (!candidate) return;
      try {
        const me = await whoami(candidate);
        sessionStorage.setItem(TOKEN_KEY, candidate);
        $('token').value = '';
        showError(null);
        show(me);
      } catch (e) {
        showError(e.status === 401 ? new Error('this token was not accepted: check it, or ask the server admin for one (egsolve token add NAME)') : e);
      }
    };
    $('logout').onclick = () => { sessionStorage.removeItem(TOKEN_KEY); show(null); };
    let me = null;
    try {
      me = await whoami();
    } catch (e) {
      if (e.status === 401) {
        sessionStorage.removeItem(TOKEN_KEY);
        showError(new Error('the saved token is no longer accepted: sign in again'));
      } else showError(e);
    }
    show(me);
    return me;
  }

  // ---- plots -------------------------------------------------------------------------------
  // Busy fraction of each GPU and the CPU pool over the last hour (x: minutes ago).
  function busyPlot(usage) {
    const plot = clear($('busy-plot'));
    const legend = clear($('busy-legend'));
    const [W, H, L, B] = [1000, 170, 40, 18];
    const now = Date.now();
    const x = (t) => L + (W - L - 4) * (1 - Math.min(1, (now - t) / (usage.window_seconds * 1000)));
    const y = (f) => 4 + (H - B - 4) * (1 - f);
    for (const f of [0, 0.5, 1]) {
      plot.append(svg('line', { x1: L, x2: W - 4, y1: y(f), y2: y(f), class: 'gridline' }));
      plot.append(svg('text', { x: L - 4, y: y(f) + 4, class: 'axis end' }, Math.round(f * 100) + '%'));
    }
    for (const m of [60, 45, 30, 15, 0]) {
      plot.append(svg('text', { x: x(now - m * 60000), y: H - 4, class: 'axis mid' }, m ? m + ' min ago' : 'now'));
    }
    const lines = usage.gpus.map((g, i) => ({ name: 'GPU ' + g.ordinal, value: (p) => p.gpus[i], cls: 'series gpu' + (i % 6) }));
    lines.push({ name: 'CPU pool (' + usage.cpu.workers + ' slots)', value: (p) => p.cpu, cls: 'series cpu' });
    if (!usage.series.length) {
      plot.append(svg('text', { x: W / 2, y: H / 2, class: 'axis mid' }, 'sampled every minute: the first points appear shortly'));
    }
    for (const line of lines) {
      // Each interval is a flat step over the time it covers.
      const points = [];
      for (const p of usage.series) {
        const end = Date.parse(p.end);
        points.push(x(end - p.seconds * 1000) + ',' + y(line.value(p)), x(end) + ',' + y(line.value(p)));
      }
      if (points.length) plot.append(svg('polyline', { points: points.join(' '), class: line.cls }));
      legend.append(el('span', { class: 'key ' + line.cls.split(' ')[1] }, line.name));
    }
  }

  // The share of vertices won by each player, as one stacked bar.
  function sharePlot(w0, w1) {
    const plot = clear($('share-plot'));
    const total = w0 + w1 || 1;
    const split = 1000 * w0 / total;
    plot.append(svg('rect', { x: 0, y: 0, width: split, height: 24, class: 'p0' }));
    plot.append(svg('rect', { x: split, y: 0, width: 1000 - split, height: 24, class: 'p1' }));
    const pct = (n) => (100 * n / total).toFixed(1) + '%';
    plot.append(svg('text', { x: 2, y: 40, class: 'axis' }, 'player 0 wins ' + num(w0) + ' (' + pct(w0) + ')'));
    plot.append(svg('text', { x: 998, y: 40, class: 'axis end' }, 'player 1 wins ' + num(w1) + ' (' + pct(w1) + ')'));
  }

  // Finite credits in equal-width bins (from the server's histogram).
  function creditPlot(h) {
    const plot = clear($('credit-plot'));
    const [W, H, L, B] = [1000, 200, 50, 20];
    if (h.credits_computed === false) {
      plot.append(svg('text', { x: W / 2, y: H / 2, class: 'axis mid' }, 'solved as a parity game: winners only, no credits'));
      return;
    }
    if (!h.w0) {
      plot.append(svg('text', { x: W / 2, y: H / 2, class: 'axis mid' }, 'player 0 wins no vertex: no finite credit'));
      return;
    }
    const most = Math.max(...h.bins.map((b) => b.count), 1);
    const step = (W - L) / h.bins.length;
    plot.append(svg('text', { x: L - 4, y: 12, class: 'axis end' }, num(most)));
    plot.append(svg('text', { x: L - 4, y: H - B, class: 'axis end' }, '0'));
    h.bins.forEach((b, i) => {
      const height = (H - B - 6) * b.count / most;
      const bar = svg('rect', { x: L + i * step + 1, y: H - B - height, width: Math.max(1, step - 2), height, class: 'bar' });
      bar.append(svg('title', {}, (b.from === b.to ? 'credit ' + num(b.from) : 'credits ' + num(b.from) + '–' + num(b.to)) + ': ' + num(b.count) + ' vertices'));
      plot.append(bar);
    });
    plot.append(svg('text', { x: L, y: H - 4, class: 'axis' }, '0'));
    plot.append(svg('text', { x: W, y: H - 4, class: 'axis end' }, 'credit ' + num(h.max_credit)));
  }

  // A running job's lifts (or steps) per second, one point per update.
  function sparkline(rates, unit) {
    const plot = clear($('rate-plot'));
    plot.toggleAttribute('hidden', rates.length < 2);
    const most = Math.max(...rates, 1);
    const pts = rates.map((v, i) => (1000 * i / Math.max(1, rates.length - 1)).toFixed(1) + ',' + (66 - 50 * v / most).toFixed(1));
    plot.append(svg('polyline', { points: pts.join(' '), class: 'series cpu' }));
    plot.append(svg('text', { x: 2, y: 12, class: 'axis' }, num(Math.round(rates[rates.length - 1])) + ' ' + unit + '/s'));
  }

  // ---- front page ----------------------------------------------------------------------------
  function frontPage() {
    let me = null;
    let cursor = null;      // next page of the jobs list
    let extra = [];         // jobs of the pages loaded with "Load more"

    async function refreshServer() {
      const usage = await api('v1/usage');
      let devices = null;
      if (me) { try { devices = await api('v1/devices'); } catch (e) { /* shown by the jobs refresh */ } }
      $('queue-depth').textContent = num(usage.queue_depth);
      $('cpu-busy').textContent = usage.cpu.busy + ' / ' + usage.cpu.workers;
      $('gpu-busy').textContent = usage.gpus.length ? usage.gpus.filter((g) => g.busy).length + ' / ' + usage.gpus.length : 'none';
      const body = clear($('gpus').tBodies[0]);
      usage.gpus.forEach((g, i) => {
        const job = devices && devices.gpus[i] && devices.gpus[i].job;
        body.append(el('tr', {}, el('td', {}, String(g.ordinal)), el('td', {}, g.name), el('td', {}, bytes(g.memory_bytes)),
          el('td', {}, stateBadge(g.busy ? 'running' : 'idle')), el('td', {}, job ? jobLink(job) : '–')));
      });
      if (!usage.gpus.length) body.append(el('tr', {}, el('td', { colspan: 5, class: 'muted' }, 'no GPU: every job runs on the CPU pool')));
      busyPlot(usage);
    }

    function jobRow(job) {
      const links = el('span', { class: 'links' });
      if (job.state === 'succeeded') {
        (job.result_formats || []).filter((f) => f in DOWNLOADS).forEach((f, i) => {
          if (i) links.append(' · ');
          links.append(resultLink(el('a', { 'data-format': f }, f), job.id, f));
        });
      } else if (job.failure) links.append(el('span', { class: 'muted', title: job.failure.message }, job.failure.type));
      const backend = job.backend && job.backend !== job.options.backend ? job.options.backend + ' → ' + job.backend : (job.backend || job.options.backend);
      return el('tr', { 'data-id': job.id, 'data-state': job.state },
        el('td', {}, jobLink(job.id)), el('td', { class: 'owner' }, job.owner), el('td', {}, stateBadge(job.state)),
        el('td', {}, backend), el('td', {}, job.device || '–'), el('td', { class: 'progress-cell' }, progressText(job)),
        el('td', { class: 'num' }, num(job.arena.vertices)), el('td', { class: 'num' }, num(job.arena.edges)),
        el('td', { title: job.created_at }, ago(job.created_at)), el('td', {}, links));
    }

    async function refreshJobs() {
      const state = $('state-filter').value;
      const page = await api('v1/jobs?limit=' + PAGE_SIZE + (state ? '&state=' + state : ''));
      if (!extra.length) cursor = page.next_cursor;
      const jobs = page.jobs.concat(extra.filter((j) => !page.jobs.some((p) => p.id === j.id)));
      const body = clear($('jobs').tBodies[0]);
      for (const job of jobs) body.append(jobRow(job));
      $('no-jobs').hidden = jobs.length > 0;
      $('more').hidden = !cursor;
      $('jobs').classList.toggle('with-owner', me.role === 'admin' && me.auth);
      $('jobs-scope').textContent = me.role === 'admin' ? (me.auth ? '(everyone’s)' : '') : '(yours)';
    }

    $('more').onclick = async () => {
      const state = $('state-filter').value;
      try {
        const page = await api('v1/jobs?limit=' + PAGE_SIZE + '&cursor=' + cursor + (state ? '&state=' + state : ''));
        extra = extra.concat(page.jobs);
        cursor = page.next_cursor;
        await refreshJobs();
      } catch (e) { showError(e); }
    };
    $('state-filter').onchange = () => { extra = []; refreshJobs().catch(showError); };

    $('submit-form').onsubmit = async (event) => {
      event.preventDefault();
      const file = $('file').files[0];
      const path = $('path-choice').hidden ? '' : $('path').value.trim();
      const status = $('submit-status');
      if (!file && !path) {
        status.textContent = me.by_reference ? 'choose a file, or name a path on the server' : 'choose a file';
        return;
      }
      const params = new URLSearchParams({ backend: $('backend').value, priority: $('priority').value || '0', return: $('return').value });
      if ($('time-limit').value) params.set('time_limit', $('time-limit').value);
      if ($('credits').checked && !$('credits').disabled) params.set('credits', 'true');
      if ($('solve-anew').checked) params.set('reuse', 'false');
      try {
        let job;
        if (path && !file) {
          // By reference: the server reads the file itself (openapi.yaml, postJob).
          status.textContent = 'submitting ' + path + '…';
          const headers = { 'Content-Type': 'application/vnd.egsolve.reference+json', 'Idempotency-Key': newKey() };
          job = await api('v1/jobs?' + params, { method: 'POST', headers, body: JSON.stringify({ path }) });
        } else {
          status.textContent = 'uploading ' + bytes(file.size) + '…';
          const { body, encoding } = await compressed(file);
          const headers = { 'Content-Type': 'application/octet-stream', 'Idempotency-Key': newKey() };
          if (encoding) headers['Content-Encoding'] = encoding;
          job = await api('v1/jobs?' + params, { method: 'POST', headers, body });
        }
        status.textContent = '';
        status.append('submitted ', jobLink(job.id), ' (' + job.state + ')');
        showError(null);
        $('submit-form').reset();
        askCredits = false;
        creditsChoice();
        extra = [];
        await refreshJobs();
      } catch (e) {
        status.textContent = 'not submitted';
        showError(e);
      }
    };

    // Credits are a choice only where the server chooses the solver (backend auto): the
    // energy backends always compute them, the parity solver never does.
    let askCredits = false;   // the choice made while the backend was auto
    function creditsChoice() {
      const backend = $('backend').value;
      $('credits').disabled = backend !== 'auto';
      $('credits').checked = backend === 'auto' ? askCredits : backend !== 'parity';
    }
    $('credits').onchange = () => { askCredits = $('credits').checked; };
    $('backend').onchange = creditsChoice;
    creditsChoice();

    let timer = null;
    async function tick() {
      clearTimeout(timer);
      try {
        await Promise.all([refreshServer(), me ? refreshJobs() : null]);
      } catch (e) {
        showError(e);
      }
      performance.mark('egsolve-rendered');
      document.body.dataset.rendered = 'yes';
      timer = setTimeout(tick, document.hidden ? 10000 : 2000);
    }
    document.addEventListener('visibilitychange', () => { if (!document.hidden) tick(); });

    signIn((who) => {
      me = who;
      $('jobs-section').hidden = !me;
      $('submit-section').hidden = !me;
      // A path on the server is offered where this caller may submit by reference.
      $('path-choice').hidden = !(me && me.by_reference);
      extra = [];
      if (!me) clear($('jobs').tBodies[0]);
    }).then(tick);
  }

  // Large plain files are gzipped in the browser before upload (already compressed ones are
  // sent as they are: the server detects gzip, zstd and bzip2 by their magic bytes).
  async function compressed(file) {
    if (file.size < (1 << 20) || typeof CompressionStream === 'undefined') return { body: file, encoding: null };
    const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
    const magic = (bytes) => bytes.every((b, i) => head[i] === b);
    if (magic([0x1f, 0x8b]) || magic([0x28, 0xb5, 0x2f, 0xfd]) || magic([0x42, 0x5a, 0x68])) return { body: file, encoding: null };
    const blob = await new Response(file.stream().pipeThrough(new CompressionStream('gzip'))).blob();
    return { body: blob, encoding: 'gzip' };
  }

  // ---- job page ---------------------------------------------------------------------------
  function jobPage() {
    const id = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop());
    $('job-id').textContent = id;
    document.title = 'egsolve job ' + shortId(id);
    const rates = [];     // lifts per second between updates
    let last = null;      // the previous update's lift count and time
    let plotted = false;
    let following = false;
    let me = null;        // the caller (GET /v1/whoami), once signed in

    function fact(dl, name, value) { dl.append(el('dt', {}, name), el('dd', {}, value)); }

    // What the answer holds: winners always, credits where computed, strategies if asked.
    function returns(job, credits) {
      const parts = ['winners'];
      if (credits === true) parts.push('credits');
      if (credits === null) parts.push(job.options.credits ? 'credits where the game’s reduction fits' : 'credits for an energy game');
      if (job.options.return === 'strategies') parts.push('strategies');
      return parts.join(', ');
    }
    // The bound M bounds the credits: before the answer it is shown for an arena that may
    // be an energy game (the result shows the solve's M), never for the parity solver's.
    function boundText(job, credits) {
      if (credits === false || job.summary || job.arena.bound === null) return '';
      return ', bound M = ' + num(job.arena.bound) + (credits === null ? ' (for a parity game: of its energy reduction)' : '');
    }

    function render(job) {
      $('job').hidden = false;
      const state = $('state');
      state.className = 'state ' + job.state;
      state.textContent = job.state;
      document.body.dataset.state = job.state;
      const bar = $('progress');
      const finished = FINISHED.includes(job.state);
      const started = job.started_at ? Date.parse(job.started_at) : null;
      if (finished) {
        bar.value = 1;
        $('progress-text').textContent = job.state + (job.durations_ms.solve !== null ? ' after ' + seconds(job.durations_ms.solve / 1000) + ' of solving' : '');
      } else if (job.state === 'running' && started) {
        const used = (Date.now() - started) / 1000;
        bar.value = Math.min(0.99, used / job.options.time_limit);
        $('progress-text').textContent = used.toFixed(0) + ' s of the ' + job.options.time_limit + ' s limit';
      } else {
        bar.removeAttribute('value');   // indeterminate while queued
        $('progress-text').textContent = progressText(job) || 'queued';
      }
      bar.className = job.state;
      const counters = $('counters');
      clear(counters);
      if (job.progress) {
        const p = job.progress;
        counters.append(el('span', { id: 'lifts' }, num(p.lifts)), ' ' + workUnit(job));
        if (p.round !== p.lifts) counters.append(' · round ', num(p.round), ' · frontier ', num(p.frontier));
        const now = performance.now();
        if (last && p.lifts >= last.lifts && now > last.at) rates.push((p.lifts - last.lifts) * 1000 / (now - last.at));
        last = { lifts: p.lifts, at: now };
        sparkline(rates.slice(-300), workUnit(job));
      }
      $('cancel').hidden = finished;
      if (job.failure) {
        $('failure').hidden = false;
        const f = job.failure;
        $('failure-text').textContent = f.type + ': ' + f.message + (f.line ? ' (line ' + f.line + ', column ' + f.column + ')' : '');
      }
      const facts = clear($('facts'));
      fact(facts, 'owner', job.owner);
      fact(facts, 'backend', job.options.backend + (job.backend && job.backend !== job.options.backend ? ' → ' + job.backend : ''));
      fact(facts, 'device', job.device || '–');
      fact(facts, 'priority', String(job.options.priority));
      fact(facts, 'time limit', job.options.time_limit + ' s');
      fact(facts, 'input format', job.options.format);
      const credits = hasCredits(job);
      const parity = isParity(job);
      fact(facts, 'returns', returns(job, credits));
      if (parity || job.options.credits) fact(facts, 'credits asked', job.options.credits ? 'yes (credits=true)' : 'no');
      fact(facts, 'arena', num(job.arena.vertices) + ' vertices, ' + num(job.arena.edges) + ' edges' + boundText(job, credits));
      fact(facts, 'sha256', el('code', {}, job.arena.sha256));
      fact(facts, 'submitted', job.created_at);
      fact(facts, 'started', job.started_at || '–');
      fact(facts, 'finished', job.finished_at || '–');
      fact(facts, 'attempts', String(job.attempts));
      const d = job.durations_ms;
      fact(facts, 'durations', ['upload', 'parse', 'solve'].map((k) => k + ' ' + (d[k] === null ? '–' : d[k].toFixed(1) + ' ms')).join(', '));
      if (job.reused) fact(facts, 'reused', 'the result of an identical earlier job');
      if (job.state === 'succeeded' && !plotted) {
        plotted = true;
        showResult(job);
      }
    }

    // Results by reference (POST …/result/export): where this caller may, a path on the
    // server and one of the answer's formats; the server writes the file, nothing is
    // downloaded. An existing file is not replaced (the answer says so).
    function offerExport(job) {
      if (!me || !me.results_by_reference) return;
      const select = clear($('export-format'));
      (job.result_formats || []).forEach((f) => select.append(el('option', { value: f }, f)));
      $('export-form').hidden = false;
      $('export-form').onsubmit = async (event) => {
        event.preventDefault();
        const status = $('export-status');
        status.textContent = 'writing…';
        try {
          const body = JSON.stringify({ path: $('export-path').value.trim(), format: select.value });
          const done = await api('v1/jobs/' + encodeURIComponent(id) + '/result/export', {
            method: 'POST', headers: { 'Content-Type': 'application/json' }, body,
          });
          status.textContent = 'written: ' + done.path + ' (' + num(done.bytes) + ' bytes'
            + (done.linked ? ', linked to the stored result)' : ')');
        } catch (e) {
          status.textContent = 'not written: ' + e.message;
        }
      };
    }

    function showResult(job) {
      $('result').hidden = false;
      const s = job.summary;
      const noCredits = s && s.credits_computed === false;
      // Only the renderings this answer has (text lists credits: none without them).
      downloadLinks(clear($('downloads')), job);
      offerExport(job);
      // No credits, no credit histogram.
      $('credit-figure').hidden = !!noCredits;
      const dl = clear($('summary'));
      if (s) {
        fact(dl, 'player 0 wins', num(s.w0) + ' vertices');
        fact(dl, 'player 1 wins', num(s.w1) + ' vertices');
        if (noCredits) {
          fact(dl, 'initial vertex ' + s.initial.vertex, 'player ' + s.initial.winner + ' wins');
          fact(dl, 'credits', 'not computed: the parity solver answers winners and strategies');
        } else {
          fact(dl, 'initial vertex ' + s.initial.vertex, 'player ' + s.initial.winner + ' wins, credit ' + credit(s.initial.credit));
          fact(dl, 'largest finite credit', num(s.max_credit));
          fact(dl, 'bound M', num(s.bound));
        }
        if (s.parity) {
          const p = s.parity;
          fact(dl, 'priorities', num(p.priorities) + ' (' + num(p.compressed_priorities) + ' after compression' + (p.per_scc ? ', per SCC' : '') + ')');
          fact(dl, 'energy reduction', !p.reduction_fits ? 'does not fit in 64 bits: credits cannot be computed for this game'
            : noCredits ? 'fits in 64 bits: submit again with “credits” (backend auto) to have them computed'
              : 'fits in 64 bits: solved for the credits');
        }
        const how = (s.algorithm ? s.algorithm + ', ' : '') + seconds(s.solve_seconds);
        fact(dl, 'solved by', noCredits ? 'the parity solver (' + how + ')' : s.backend + ' (' + how + ', ' + num(s.lifts) + ' lifts)');
        sharePlot(s.w0, s.w1);
      }
      api('v1/jobs/' + id + '/result/histogram?bins=30').then((h) => {
        sharePlot(h.w0, h.w1);
        creditPlot(h);
      }).catch(showError);
    }

    async function follow() {
      if (following) return;
      following = true;
      let job = null;
      try {
        for (;;) {
          // Long poll: while running, at least once a second for the progress counters.
          const wait = !job ? '' : job.state === 'queued' ? '?wait=25' : '?wait=1';
          job = await api('v1/jobs/' + encodeURIComponent(id) + wait);
          render(job);
          showError(null);
          if (FINISHED.includes(job.state)) break;
        }
      } catch (e) {
        if (e.status === 404) $('job').hidden = true;
        showError(e);
        if (e.status !== 404 && e.status !== 401) setTimeout(() => { following = false; follow(); }, 3000);
        return;
      }
      following = false;
    }

    $('cancel').onclick = async () => {
      try { render(await api('v1/jobs/' + id, { method: 'DELETE' })); } catch (e) { showError(e); }
    };

    signIn((caller) => {
      me = caller;
      if (me) follow();
    });
  }

  if (document.body.dataset.page === 'job') jobPage(); else frontPage();
})();

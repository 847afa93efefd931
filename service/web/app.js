// linkwise web page: shared helpers and the hash router. Every view is a client of the public REST
// API (/v1/...); its state lives in the URL after '#', so any view can be linked and reopened.
'use strict';

const LW = (() => {
  const views = {};  // name -> {section, render(params, rest)}
  let gpusPromise = null;
  let instancesPromise = null;
  let chartPromise = null;

  // --- DOM ---
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  // --- numbers ---
  function fmt(v, digits) {
    if (v === null || v === undefined || (typeof v === 'number' && !isFinite(v))) return h('span', {class: 'unknown', title: 'unknown'}, '–');
    if (typeof v === 'boolean') return h('span', {class: 'badge ' + (v ? 'yes' : 'no')}, v ? 'yes' : 'no');
    if (typeof v === 'number') return num(v, digits);
    if (Array.isArray(v)) return v.join(', ');
    return String(v);
  }
  function num(v, digits) {
    if (v === null || v === undefined) return '–';
    const opts = digits === undefined ? {maximumFractionDigits: Math.abs(v) < 10 ? 3 : Math.abs(v) < 1000 ? 2 : 0}
                                      : {minimumFractionDigits: digits, maximumFractionDigits: digits};
    return v.toLocaleString('en-US', opts);
  }
  // Money: one format everywhere a figure is read (tables, tiles, intervals), with thousands
  // separators: cents below $100 (prices per hour, per million tokens), whole dollars from $100 (a
  // job's cost). usdShort is for chart ticks only.
  function usd(v) {
    if (v === null || v === undefined) return '–';
    const digits = Math.abs(Math.round(v * 100) / 100) < 100 ? 2 : 0;  // $99.996 reads "$100", not "$100.00"
    return (v < 0 ? '-$' : '$') + Math.abs(v).toLocaleString('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
  }
  function usdShort(v) {
    if (Math.abs(v) >= 1e6) return '$' + (v / 1e6).toLocaleString('en-US', {maximumFractionDigits: 2}) + 'M';
    if (Math.abs(v) >= 1e4) return '$' + (v / 1e3).toLocaleString('en-US', {maximumFractionDigits: 1}) + 'k';
    return '$' + v.toLocaleString('en-US', {maximumFractionDigits: 2});
  }
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return '–';
    if (seconds < 1e-3) return num(seconds * 1e6, 0) + ' µs';
    if (seconds < 1) return num(seconds * 1e3, seconds < 0.01 ? 2 : 1) + ' ms';
    if (seconds < 120) return num(seconds, 2) + ' s';
    const hours = seconds / 3600;
    if (hours < 2) return num(seconds / 60, 1) + ' min';
    if (hours < 72) return num(hours, 1) + ' h';
    return num(hours / 24, 1) + ' days';
  }
  // One time unit for a whole table column (so it can be scanned): the unit duration() would pick
  // for the column's median value. Returns {unit, of(seconds)} for the header and the cells.
  const TIME_UNITS = [['µs', 1e-6], ['ms', 1e-3], ['s', 1], ['min', 60], ['h', 3600], ['days', 86400]];
  function durationColumn(values) {
    const known = values.filter(v => v !== null && v !== undefined && isFinite(v)).sort((a, b) => a - b);
    const median = known.length ? known[Math.floor(known.length / 2)] : 1;
    const unit = median < 1e-3 ? 'µs' : median < 1 ? 'ms' : median < 120 ? 's' : median < 7200 ? 'min' : median < 72 * 3600 ? 'h' : 'days';
    const scale = TIME_UNITS.find(([u]) => u === unit)[1];
    return {unit, of: v => v === null || v === undefined || !isFinite(v) ? '–'
                            : num(v / scale, v / scale < 10 ? 2 : v / scale < 1000 ? 1 : 0)};
  }

  // --- REST ---
  class ApiError extends Error {
    constructor(status, problem) {
      super(problem && problem.detail ? problem.detail : 'HTTP ' + status);
      this.status = status; this.problem = problem || {};
    }
  }
  async function api(path, options) {
    const res = await fetch(path, Object.assign({headers: {'Accept': 'application/json'}}, options || {}));
    const text = await res.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = {detail: text}; }
    if (!res.ok) throw new ApiError(res.status, body);
    return body;
  }
  function gpus() {
    if (!gpusPromise) gpusPromise = api('/v1/gpus').then(r => r.items || r).catch(e => { gpusPromise = null; throw e; });
    return gpusPromise;
  }
  // Every instance, for pickers (one request; the catalog has a few hundred).
  function allInstances() {
    if (!instancesPromise) {
      instancesPromise = api('/v1/instances?limit=1000').then(r => r.items).catch(e => { instancesPromise = null; throw e; });
    }
    return instancesPromise;
  }

  // Chart.js (Debian's libjs-chart.js, embedded) is loaded when a view first draws a chart.
  function chartjs() {
    if (!chartPromise) {
      chartPromise = new Promise((resolve, reject) => {
        if (window.Chart) return resolve(window.Chart);
        const src = document.querySelector('meta[name="lw-chartjs"]').content;
        const s = h('script', {src});
        s.onload = () => {
          Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
          Chart.defaults.color = '#323f4b';
          Chart.defaults.animation = false;
          resolve(window.Chart);
        };
        s.onerror = () => reject(new Error('could not load ' + src));
        document.head.append(s);
      });
    }
    return chartPromise;
  }

  // --- alerts ---
  const alertBox = () => document.getElementById('alert');
  function showError(err, context) {
    const box = alertBox();
    box.replaceChildren();
    const p = err && err.problem ? err.problem : {};
    box.append(h('strong', {}, (context ? context + ': ' : '') + (p.title || 'Error')), ' ',
               err && err.message ? err.message : String(err));
    if (p.field) box.append(h('span', {class: 'note'}, ' (field: ', h('code', {}, p.field), ')'));
    box.hidden = false;
    box.scrollIntoView({block: 'nearest'});
  }
  function clearError() { const box = alertBox(); box.hidden = true; box.replaceChildren(); }

  // --- URL state ---
  function parseHash() {
    const raw = location.hash.replace(/^#\/?/, '');
    const q = raw.indexOf('?');
    const path = decodeURIComponent(q < 0 ? raw : raw.slice(0, q));
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const [view, ...rest] = path.split('/');
    return {view: view || 'instances', rest: rest.join('/'), params};
  }
  function hashFor(view, params, rest) {
    const qs = params ? new URLSearchParams(params).toString() : '';
    return '#/' + view + (rest ? '/' + encodeURIComponent(rest) : '') + (qs ? '?' + qs : '');
  }
  // Records a view's state in the URL without a new history entry (filters typed one by one).
  // The view's state in the URL: replaced in place (a filter typed, a row selected), or a new history
  // entry with `push` (a new answer asked for, so Back returns to the previous one).
  function setState(view, params, rest, push) {
    const target = hashFor(view, params, rest);
    if (location.hash !== target) history[push ? 'pushState' : 'replaceState'](null, '', target);
  }

  function register(name, view) { views[name] = view; }

  let current = null;
  function route() {
    const {view, rest, params} = parseHash();
    let name = view;
    if (name === 'instances' && rest) name = 'instance';
    if (!views[name]) name = 'instances';
    clearError();
    for (const section of document.querySelectorAll('main > section.view')) section.hidden = section.id !== 'view-' + name;
    const navName = name === 'instance' ? 'instances' : name;
    for (const a of document.querySelectorAll('header nav a[data-view]')) {
      if (a.dataset.view === navName) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    const changedView = current !== name;
    current = name;
    const titles = {instances: 'Instances', instance: rest, plan: 'Plan', fleet: 'Fleet'};
    document.title = (titles[name] || 'linkwise') + ' · linkwise';
    Promise.resolve(views[name].render(params, rest)).catch(err => showError(err));
    if (changedView) window.scrollTo(0, 0);
  }

  function copyText(text, button) {
    const done = () => {
      const old = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = old; }, 1200);
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => fallback());
    else fallback();
    function fallback() {
      const ta = h('textarea', {class: 'sr-only', 'aria-hidden': 'true'});
      ta.value = text; document.body.append(ta); ta.select();
      try { document.execCommand('copy'); } catch (e) { /* the text stays selectable on the page */ }
      ta.remove(); done();
    }
  }

  function download(filename, text, type) {
    const url = URL.createObjectURL(new Blob([text], {type}));
    const a = h('a', {href: url, download: filename});
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  function debounce(fn, ms) {
    let t = null;
    return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
  }

  window.addEventListener('hashchange', route);
  // The skip link moves focus to the content without touching the URL (the hash holds the view).
  document.addEventListener('click', e => {
    if (e.target.closest && e.target.closest('a.skip')) { e.preventDefault(); document.getElementById('main').focus(); }
  });
  document.addEventListener('DOMContentLoaded', route);

  return {h, fmt, num, usd, usdShort, duration, durationColumn, api, ApiError, gpus, allInstances, chartjs, showError, clearError,
          parseHash, hashFor, setState, register, copyText, download, debounce};
})();

// gpuburst's status page: draws the document of api/events (Server-Sent
// Events: one at connect, one each time it changes) and nothing else.  Text
// goes into the page as text only (textContent), never as markup.  The
// token the page was opened with (?token=) goes on to what it loads.
'use strict';

(function () {
  const token = new URLSearchParams(window.location.search).get('token');
  let selected = null;          // the request whose timeline is shown
  let last = null;              // the last document
  let skew = 0;                 // the server's clock minus ours, seconds

  function withToken(url) {
    return token ? url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token)
                 : url;
  }

  function $(id) { return document.getElementById(id); }

  // el('td', {class: 'x'}, 'text', child...)
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {}))
      e.setAttribute(k, v);
    for (const k of kids)
      e.append(k instanceof Node ? k : document.createTextNode(k == null ? '-' : String(k)));
    return e;
  }

  function age(seconds) {
    if (seconds == null || !isFinite(seconds)) return '-';
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + String(s % 60).padStart(2, '0') + 's';
    return Math.floor(s / 3600) + 'h ' + String(Math.floor(s % 3600 / 60)).padStart(2, '0') + 'm';
  }

  function fill(table, none, rows) {
    const body = $(table).tBodies[0];
    body.replaceChildren(...rows);
    $(none).hidden = rows.length > 0;
  }

  function progress(r) {
    const want = r.node_count || 0, inst = r.instances || {};
    const done = r.kind === 'resume' ? Math.min(want, r.launched || 0) : 0;
    const bar = el('span', {class: 'bar', title: done + ' of ' + want + ' nodes'}, el('span', {}));
    bar.firstChild.style.width = (want ? Math.round(100 * done / want) : 0) + '%';
    const text = r.kind === 'resume'
      ? done + '/' + want + ' nodes, ' + (inst.running || 0) + ' running, ' +
        (inst.alive || 0) + ' alive'
      : (inst.alive || 0) + ' alive';
    return el('td', {class: 'progress'}, bar, ' ', text);
  }

  function calls(r) {
    const td = el('td', {});
    for (const c of r.calls || []) {
      if (td.childNodes.length) td.append(', ');
      td.append(c.region + ' ' + c.ok + '/' + c.calls);
      if (c.refused)
        td.append(' ', el('span', {class: 'refused', title: c.last_error || ''},
                          c.refused + ' refused'));
    }
    if (!td.childNodes.length) td.append('-');
    return td;
  }

  function requestRow(r, now) {
    const tr = el('tr', {class: 'req' + (r.id === selected ? ' selected' : ''),
                         'data-id': r.id, 'data-state': r.state},
      el('td', {}, el('code', {}, r.id)),
      el('td', {}, r.kind),
      el('td', {class: 'job'}, r.job_id),
      el('td', {}, r.user),
      el('td', {}, el('code', {}, r.nodes)),
      el('td', {class: 'state state-' + r.state}, r.state,
         r.result && r.result !== 'none' ? ' (' + r.result + ')' : ''),
      progress(r),
      calls(r),
      el('td', {}, age(now - r.created)));
    if (r.reason) tr.title = r.reason;
    tr.addEventListener('click', () => show(r.id));
    return tr;
  }

  function approvalRow(a, now) {
    const job = a.job || {}, req = a.request || {};
    return el('tr', {'data-id': a.request_id},
      el('td', {}, el('code', {}, a.request_id)),
      el('td', {}, req.job_id),
      el('td', {}, job.user),
      el('td', {}, job.account),
      el('td', {}, el('code', {}, req.nodes)),
      el('td', {}, job.cost_usd != null ? '$' + job.cost_usd.toFixed(2) : '-'),
      el('td', {}, a.rule),
      el('td', {}, a.why),
      el('td', {}, a.expires_at ? 'in ' + age(Date.parse(a.expires_at) / 1000 - now) : '-'));
  }

  function poolRow(p, now) {
    const est = p.estimate;
    return el('tr', {},
      el('td', {}, p.region),
      el('td', {}, p.az),
      el('td', {}, p.instance_type),
      el('td', {}, p.capacity),
      el('td', {}, est == null ? '-' : typeof est === 'number' ? est.toFixed(1) : est),
      el('td', {}, p.estimate_basis),
      el('td', {}, p.cooling && p.cool_down_until ? 'for ' + age(p.cool_down_until - now) : 'no'),
      el('td', {}, p.quota_room == null ? '-' : p.quota_room));
  }

  function show(id) {
    selected = id;
    $('timeline').hidden = false;
    $('timeline-id').textContent = id;
    if (last) render(last);
  }

  // the picture again when its request changed (its "updated" in the URL)
  function picture(doc) {
    const r = (doc.requests || []).find((x) => x.id === selected);
    if (!r) return;
    const src = withToken('api/requests/' + r.id + '.svg?v=' + r.updated);
    if ($('timeline-img').getAttribute('src') !== src)
      $('timeline-img').setAttribute('src', src);
  }

  // the document is sent when it changes; the ages go on with the clock
  function render(doc) {
    last = doc;
    const now = Date.now() / 1000 + skew;
    $('cluster').textContent = doc.cluster || '';
    $('version').textContent = 'gpuburst ' + doc.version;
    $('updated').textContent = 'changed at ' + new Date(doc.now * 1000).toLocaleTimeString();
    const reqs = (doc.requests || []).slice().reverse();     // newest first
    fill('requests', 'requests-none', reqs.map((r) => requestRow(r, now)));
    fill('approvals', 'approvals-none', (doc.approvals || []).map((a) => approvalRow(a, now)));
    fill('pools', 'pools-none', (doc.pools || []).map((p) => poolRow(p, now)));
    picture(doc);
  }

  function connect() {
    const es = new EventSource(withToken('api/events'));
    es.addEventListener('status', (e) => {
      $('conn').textContent = 'live';
      $('conn').className = 'conn-live';
      const doc = JSON.parse(e.data);
      skew = doc.now - Date.now() / 1000;
      render(doc);
      // how many documents this page has drawn since it loaded
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    });
    es.addEventListener('error', () => {     // EventSource tries again by itself
      $('conn').textContent = 'reconnecting';
      $('conn').className = 'conn-wait';
    });
  }

  connect();
  setInterval(() => { if (last) render(last); }, 1000);
})();

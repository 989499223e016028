// The console's page: plain JavaScript, no build step. Everything a record carries is put in the page as text
// (textContent, never innerHTML), so a payload holding markup shows the markup and never runs it.

const state = { session: null, letters: [], selected: new Set(), polling: null };
const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'onclick') node.addEventListener('click', value);
    else if (name === 'className') node.className = value;
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function table(headers, rows) {
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        headers.map((h) => el('th', {}, h)),
      ),
    ),
    el('tbody', {}, rows),
  );
}

function say(text, error = false) {
  const box = $('message');
  box.textContent = text;
  box.className = error ? 'error' : '';
  box.hidden = !text;
}

const when = (value) => (value ? new Date(value).toLocaleString() : '—');
const ago = (seconds) =>
  seconds === null || seconds === undefined
    ? '—'
    : seconds < 90
      ? `${Math.round(seconds)} s`
      : seconds < 5400
        ? `${Math.round(seconds / 60)} min`
        : `${Math.round(seconds / 3600)} h`;
const bars = '▁▂▃▄▅▆▇█';
const trend = (counts) => {
  const max = Math.max(1, ...counts);
  return counts.map((n) => (n === 0 ? '·' : bars[Math.min(7, Math.floor((n / max) * 7))])).join('');
};

async function api(path, body) {
  const init = { credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['content-type'] = 'application/json';
    init.headers['x-csrf-token'] = state.session?.csrf ?? '';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const value = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(value.error ?? `HTTP ${response.status}`);
  return value;
}

async function guarded(work) {
  try {
    await work();
  } catch (error) {
    say(error.message, true);
  }
}

// ---- health
async function showHealth() {
  const h = await api('api/health');
  const view = $('view-health');
  const card = (title, big, ...lines) =>
    el(
      'div',
      { className: 'card' },
      el('h3', {}, title),
      el('div', { className: 'big' }, big),
      lines.map((l) => el('div', {}, l)),
    );
  const lagRows = Array.isArray(h.lag) ? h.lag : [];
  const retryDepth = lagRows.filter((p) => p.retry).reduce((sum, p) => sum + p.lag, 0);
  const relays = h.relays
    ? h.relays.map(
        (r, i) =>
          `relay ${i + 1}: ${r.running ? 'running' : 'stopped'}, last publish ${when(r.lastPublishedAt)}${r.failingPasses ? `, ${r.failingPasses} failing passes` : ''}`,
      )
    : ['no relay in this process: the outbox age tells'];
  view.replaceChildren(
    el(
      'div',
      { className: 'cards' },
      card('Outbox backlog', h.outbox.pending, `oldest ${ago(h.outbox.oldestSeconds)}`, `${h.outbox.refused} refused`),
      card('Relay heartbeat', h.relays ? h.relays.filter((r) => r.running).length : '—', relays),
      card(
        'Dead letters',
        h.deadLetters.dead,
        `oldest ${ago(h.deadLetters.oldestSeconds)}`,
        `inflow: ${h.deadLetters.lastHour} last hour, ${h.deadLetters.lastDay} last day`,
      ),
      card('Retry-topic depth', retryDepth, `${lagRows.filter((p) => p.retry).length} retry partitions`),
      card('Effects', h.effects.dead, 'dead', `${h.effects.pending} pending`),
      card(
        'Breaker / limiter',
        h.backpressure ? h.backpressure.breaker_state : '—',
        h.backpressure
          ? `sender paused: ${h.backpressure.sender_paused}, in flight ${h.backpressure.sender_in_flight}`
          : 'no sender given to the console',
      ),
    ),
    el('h2', {}, `Firing alerts (${h.alerts.length})`),
    h.alerts.length === 0
      ? el('p', { className: 'level-ok' }, 'nothing firing')
      : table(
          ['level', 'check', 'what', 'fix'],
          h.alerts.map((a) =>
            el(
              'tr',
              {},
              el('td', { className: `level-${a.level}` }, a.level),
              el('td', {}, a.check),
              el('td', {}, a.what),
              el('td', {}, a.fix ?? ''),
            ),
          ),
        ),
    el('h2', {}, 'Lag per group and partition'),
    Array.isArray(h.lag)
      ? table(
          ['group', 'topic', 'partition', 'lag (records)', 'lag (seconds)'],
          lagRows.map((p) =>
            el(
              'tr',
              {},
              el('td', {}, p.group),
              el('td', {}, p.topic, p.retry ? ' (retry)' : ''),
              el('td', { className: 'num' }, p.partition),
              el('td', { className: 'num' }, p.lag),
              el('td', { className: 'num' }, p.lagSeconds === null ? '—' : p.lagSeconds),
            ),
          ),
        )
      : el('p', { className: 'level-warn' }, `lag not read: ${h.lag.error}`),
    el('p', { className: 'level-skip' }, `read ${when(h.at)} · transport ${h.transport}`),
  );
}

// ---- redrive
function redriveOptions() {
  const rate = Number($('rate').value);
  return {
    dryRun: $('dry-run').checked,
    force: $('force').checked,
    ...(rate > 0 ? { ratePerSecond: rate } : {}),
    ...($('target').value ? { transport: $('target').value } : {}),
  };
}

async function startRedrive(ids, label) {
  if (ids.length === 0) return say('nothing selected', true);
  const job = await api('api/jobs', { ids, label, ...redriveOptions() });
  say(`redrive job ${job.id} started: ${job.total} letters${job.dryRun ? ' (dry run)' : ''}`);
  show('jobs');
}

// ---- failure groups
async function showFailures() {
  const form = new FormData($('failures-form'));
  const result = await api(`api/failures?${new URLSearchParams(form)}`);
  const by = result.by;
  $('failures').replaceChildren(
    el('p', {}, `${result.letters} letters in ${result.groups.length} groups`),
    table(
      [
        'count',
        'class',
        'message',
        'top frame',
        by === 'cause' ? 'code' : by,
        'first seen',
        'last seen',
        'trend (12 h)',
        '',
      ],
      result.groups.map((g) =>
        el(
          'tr',
          { 'data-fingerprint': g.fingerprint },
          el('td', { className: 'num' }, g.count),
          el('td', {}, g.errorClass),
          el('td', {}, g.message),
          el('td', {}, g.topFrame ?? '—'),
          el('td', {}, by === 'cause' ? g.code : g.by),
          el('td', {}, when(g.firstSeen)),
          el('td', {}, when(g.lastSeen)),
          el('td', { className: 'trend' }, trend(g.trend)),
          el(
            'td',
            {},
            el(
              'button',
              {
                onclick: () => {
                  $('letters-form').fingerprint.value = g.fingerprint;
                  show('letters');
                },
              },
              'letters',
            ),
            ' ',
            el(
              'button',
              {
                className: 'primary redrive-group',
                onclick: () =>
                  guarded(() =>
                    startRedrive(g.ids, `group ${g.fingerprint}${g.by ? ` ${by} ${g.by}` : ''}: ${g.errorClass}`),
                  ),
              },
              'Redrive group',
            ),
          ),
        ),
      ),
    ),
  );
}

// ---- dead letters
async function showLetters() {
  const params = new URLSearchParams([...new FormData($('letters-form'))].filter(([, v]) => v !== ''));
  state.letters = await api(`api/letters?${params}`);
  state.selected.clear();
  $('letters-count').textContent = `${state.letters.length} letters`;
  $('letters').replaceChildren(
    table(
      [
        '',
        'id',
        'group',
        'topic[partition]@offset',
        'event type',
        'key',
        'code',
        'attempts',
        'reason',
        'last failed',
        'status',
      ],
      state.letters.map((l) => {
        const box = el('input', { type: 'checkbox', 'aria-label': `select ${l.id}` });
        box.addEventListener('click', (event) => {
          event.stopPropagation();
          if (box.checked) state.selected.add(l.id);
          else state.selected.delete(l.id);
        });
        return el(
          'tr',
          { className: 'clickable letter', 'data-id': l.id, onclick: () => guarded(() => showLetter(l.id)) },
          el('td', {}, box),
          el('td', {}, l.id),
          el('td', {}, l.consumer),
          el('td', {}, `${l.topic}[${l.partition}]@${l.offset}`),
          el('td', {}, l.eventType ?? '—'),
          el('td', {}, l.key ?? '—'),
          el('td', {}, l.code),
          el('td', { className: 'num' }, l.attempts),
          el('td', {}, l.reason.slice(0, 120)),
          el('td', {}, when(l.lastFailedAt)),
          el('td', {}, l.status),
        );
      }),
    ),
  );
  $('letter-detail').replaceChildren();
}

async function showLetter(id) {
  const l = await api(`api/letters/${encodeURIComponent(id)}`);
  const row = (name, value) => [el('dt', {}, name), el('dd', {}, value ?? '—')];
  const applied =
    l.applied.groups.length === 0
      ? 'no: no group applied this event'
      : l.applied.groups.map((g) => `yes: ${g.consumer} at ${when(g.at)}`).join('; ');
  $('letter-detail').replaceChildren(
    el(
      'div',
      { className: 'detail', id: 'detail' },
      el('h2', {}, `Dead letter ${l.id}`),
      el(
        'dl',
        {},
        row('coordinates', `${l.topic}[${l.partition}]@${l.offset}`),
        row('group', l.consumer),
        row('status', l.status),
        row('event id', l.eventId),
        row('source', l.source),
        row('event type', l.eventType),
        row('dedup key', l.dedupKey),
        row('key', l.key),
        row('attempts', `${l.attempts}, first ${when(l.firstFailedAt)}, last ${when(l.lastFailedAt)}`),
        row('error', `${l.code}: ${l.reason}`),
        row('fingerprint', `${l.cause.fingerprint} (${l.cause.errorClass}: ${l.cause.message})`),
        row('already applied?', applied),
        row(
          'effects of its key',
          l.effects.length === 0
            ? 'none'
            : l.effects
                .map((e) => `${e.kind}: ${e.status} (${e.attempts} attempts${e.lastCode ? `, ${e.lastCode}` : ''})`)
                .join('; '),
        ),
      ),
      el('h3', {}, 'Headers'),
      table(
        ['name', 'value'],
        Object.entries(l.headers).map(([name, value]) =>
          el('tr', {}, el('td', {}, name), el('td', { className: 'header-value' }, value)),
        ),
      ),
      el('h3', {}, 'Payload'),
      el('pre', { id: 'payload' }, l.payload ?? '(none)'),
    ),
  );
}

// ---- jobs
async function showJobs() {
  const { jobs, history } = await api('api/jobs');
  $('jobs').replaceChildren(
    el('h2', {}, 'Jobs of this console'),
    jobs.length === 0
      ? el('p', {}, 'none yet')
      : table(
          ['job', 'what', 'by', 'target', 'progress', 'result', ''],
          jobs.map((j) =>
            el(
              'tr',
              { className: `job job-${j.status}`, 'data-job': j.id },
              el('td', {}, j.id),
              el('td', {}, j.label, j.dryRun ? ' (dry run)' : ''),
              el('td', {}, j.by),
              el('td', {}, j.target || '—', j.ratePerSecond ? ` · ≤ ${j.ratePerSecond}/s` : ''),
              el('td', {}, el('progress', { max: j.total || 1, value: j.done }), ` ${j.done} / ${j.total}`),
              el(
                'td',
                { className: 'result' },
                `${j.status}${j.dryRun ? `: would redrive ${j.done}` : `: ${j.redriven} redriven`}`,
                j.error ? el('div', { className: 'level-fail' }, j.error) : null,
                j.warnings.map((w) =>
                  el(
                    'div',
                    { className: 'warning' },
                    `letter ${w.id} (key ${w.key ?? '—'}): ${w.later} later event(s) of the same key were already applied; this one would be applied after them`,
                  ),
                ),
                j.laterAppliedChecked
                  ? null
                  : el(
                      'div',
                      { className: 'level-skip' },
                      'later events of the same key: not checked (the log is not in this database)',
                    ),
              ),
              el(
                'td',
                {},
                j.status === 'running'
                  ? el(
                      'button',
                      {
                        onclick: () =>
                          guarded(async () => {
                            await api(`api/jobs/${j.id}/cancel`, {});
                            await showJobs();
                          }),
                      },
                      'Cancel',
                    )
                  : null,
              ),
            ),
          ),
        ),
    el('h2', {}, 'History'),
    table(
      ['when', 'who', 'what', 'outcome'],
      history.map((a) =>
        el(
          'tr',
          {},
          el('td', {}, when(a.at)),
          el('td', {}, `${a.actor} (${a.role})`),
          el('td', {}, `${a.action}: ${a.target}`),
          el('td', {}, a.outcome),
        ),
      ),
    ),
  );
  clearTimeout(state.polling);
  if (jobs.some((j) => j.status === 'running') && !$('view-jobs').hidden)
    state.polling = setTimeout(() => guarded(showJobs), 500);
}

async function showAudit() {
  const entries = await api('api/audit');
  $('audit').replaceChildren(
    table(
      ['when', 'who', 'action', 'target', 'outcome', 'details'],
      entries.map((a) =>
        el(
          'tr',
          {},
          el('td', {}, when(a.at)),
          el('td', {}, `${a.actor} (${a.role})`),
          el('td', {}, a.action),
          el('td', {}, a.target),
          el('td', {}, a.outcome),
          el('td', {}, JSON.stringify(a.details).slice(0, 200)),
        ),
      ),
    ),
  );
}

// ---- navigation
const views = { health: showHealth, failures: showFailures, letters: showLetters, jobs: showJobs, audit: showAudit };

function show(name) {
  for (const button of document.querySelectorAll('#tabs button'))
    button.classList.toggle('active', button.dataset.view === name);
  for (const key of Object.keys(views)) $(`view-${key}`).hidden = key !== name;
  return guarded(views[name]);
}

async function start() {
  for (const button of document.querySelectorAll('#tabs button'))
    button.addEventListener('click', () => {
      say('');
      show(button.dataset.view);
    });
  $('failures-form').addEventListener('submit', (event) => {
    event.preventDefault();
    guarded(showFailures);
  });
  $('letters-form').addEventListener('submit', (event) => {
    event.preventDefault();
    guarded(showLetters);
  });
  $('redrive-selected').addEventListener('click', () =>
    guarded(() => startRedrive([...state.selected], `${state.selected.size} selected letters`)),
  );
  $('redrive-listed').addEventListener('click', () =>
    guarded(() =>
      startRedrive(
        state.letters.filter((l) => l.status !== 'discarded').map((l) => l.id),
        `${state.letters.length} listed letters`,
      ),
    ),
  );
  $('discard-selected').addEventListener('click', () =>
    guarded(async () => {
      const { discarded } = await api('api/letters/discard', { ids: [...state.selected] });
      say(`${discarded} letters discarded`);
      await showLetters();
    }),
  );
  try {
    state.session = await api('api/session');
  } catch (error) {
    $('who').textContent = 'not logged in';
    return say(`${error.message}`, true);
  }
  const s = state.session;
  $('who').textContent = `${s.user} · ${s.role}${s.readOnly ? ' · read-only' : ''}`;
  await show('health');
}

document.addEventListener('DOMContentLoaded', start);

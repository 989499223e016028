// Failure groups, dead letters and the redrive of either.
import { $, api, el, guarded, say, state, table, trend, when } from './dom.js';

function redriveOptions() {
  const rate = Number($('rate').value);
  return {
    dryRun: $('dry-run').checked,
    force: $('force').checked,
    ...(rate > 0 ? { ratePerSecond: rate } : {}),
    ...($('target').value ? { transport: $('target').value } : {}),
  };
}

export async function startRedrive(ids, label) {
  if (ids.length === 0) return say('nothing selected', true);
  const job = await api('api/jobs', { ids, label, ...redriveOptions() });
  say(`redrive job ${job.id} started: ${job.total} letters${job.dryRun ? ' (dry run)' : ''}`);
  state.show('jobs');
}

// ---- failure groups
export async function showFailures() {
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
                  state.show('letters');
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
export async function showLetters() {
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

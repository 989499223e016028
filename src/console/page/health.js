// The health view.
import { $, ago, api, el, guarded, state, table, when } from './dom.js';

export async function showHealth() {
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
          `relay ${i + 1}: ${r.running ? 'running' : 'stopped'}, last publish ${when(r.lastPublishedAt)}${r.failingPasses ? `, ${r.failingPasses} failing passes` : ''}${r.overtaken ? `, ${r.overtaken} rows out of key order` : ''}`,
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
    el('p', { className: 'level-skip' }, `read ${when(h.at)} · transport ${h.transport} · every 10 s while shown`),
  );
  clearTimeout(state.polling);
  state.polling = setTimeout(() => {
    if (!view.hidden) guarded(showHealth);
  }, 10_000);
}

// Redrive jobs and the audit log.
import { $, api, el, guarded, state, table, when } from './dom.js';

export async function showJobs() {
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

export async function showAudit() {
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

// The console's page: plain JavaScript, no build step. Everything a record carries is put in the page as text
// (textContent, never innerHTML), so a payload holding markup shows the markup and never runs it.

import { $, api, guarded, say, state } from './dom.js';
import { showHealth } from './health.js';
import { showAudit, showJobs } from './jobs.js';
import { showFailures, showLetters, startRedrive } from './letters.js';

const views = { health: showHealth, failures: showFailures, letters: showLetters, jobs: showJobs, audit: showAudit };

function show(name) {
  for (const button of document.querySelectorAll('#tabs button'))
    button.classList.toggle('active', button.dataset.view === name);
  for (const key of Object.keys(views)) $(`view-${key}`).hidden = key !== name;
  return guarded(views[name]);
}

async function start() {
  state.show = show;
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

// The console's page: plain JavaScript, no build step. Everything a record carries is put in the page as text
// (textContent, never innerHTML), so a payload holding markup shows the markup and never runs it.

export const state = { session: null, letters: [], selected: new Set(), polling: null };
export const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
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

export function table(headers, rows) {
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

export function say(text, error = false) {
  const box = $('message');
  box.textContent = text;
  box.className = error ? 'error' : '';
  box.hidden = !text;
}

export const when = (value) => (value ? new Date(value).toLocaleString() : '—');
export const ago = (seconds) =>
  seconds === null || seconds === undefined
    ? '—'
    : seconds < 90
      ? `${Math.round(seconds)} s`
      : seconds < 5400
        ? `${Math.round(seconds / 60)} min`
        : `${Math.round(seconds / 3600)} h`;
const bars = '▁▂▃▄▅▆▇█';
export const trend = (counts) => {
  const max = Math.max(1, ...counts);
  return counts.map((n) => (n === 0 ? '·' : bars[Math.min(7, Math.floor((n / max) * 7))])).join('');
};

export async function api(path, body) {
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

export async function guarded(work) {
  try {
    await work();
  } catch (error) {
    say(error.message, true);
  }
}

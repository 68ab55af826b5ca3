// The explorer's page: a gallery of the index, the neighbours of a query under every condition
// side by side (with --compare, the two runs' columns in pairs, condition by condition), and the
// runs' alignment, results and curves. One module, no build step. Served by `wscsl explore` it
// asks the server's /api; written by --static it reads the answers embedded in the page
// (#wscsl-data) and its images from images/. A query is named as a link names it: a row of the
// first index, a file it holds (or the end of its path), or an image given on the command line.
const embedded = document.getElementById('wscsl-data');
const data = embedded ? JSON.parse(embedded.textContent) : null;
const $ = (id) => document.getElementById(id);
const pageSize = 48;

async function fetchJson(url, options) {
  const response = await fetch(url, options);
  if (!response.ok) throw new Error((await response.text()).trim());
  return response.json();
}

// --static: the query a name means (as the server resolves it), among those the page holds.
const held = (key) => data.gallery.find((i) => i.key === key || String(i.row) === key ||
  i.label === key || i.label.endsWith(`/${key}`));

const api = data ? {
  summary: async () => ({ ...data.summary, conditions: data.conditions, queries: [] }),
  gallery: async (offset, limit, q) => {
    const words = q.toLowerCase().split(/\s+/).filter((w) => w);
    const text = (item) => [item.label, ...Object.entries(item.attributes).map(([c, v]) => `${c}=${v}`)]
      .join(' ').toLowerCase();
    const items = data.gallery.filter((item) => words.every((w) => text(item).includes(w)));
    return { total: data.gallery.length, matches: items.length, offset, items: items.slice(offset, offset + limit) };
  },
  neighbours: async (key, k, conditions) => {
    const item = held(key);
    if (!item) throw new Error(`This page holds no view of ${key}; its queries are those of the gallery.`);
    const answer = data.neighbours[item.key];
    const shown = (c) => !conditions.length || conditions.includes(c);
    return { ...answer, conditions: answer.conditions.filter(shown),
      sides: answer.sides.map((side) => side.error ? side : { ...side, conditions: side.conditions
        .filter((c) => shown(c.condition)).map((c) => ({ ...c, neighbours: c.neighbours.slice(0, k) })) }) };
  },
  upload: null,
  image: (side, row) => `images/${side}-${row}.png`,
  queryImage: (key) => held(key).picture,
  runFile: null,
} : {
  summary: () => fetchJson('/api/summary'),
  gallery: (offset, limit, q) =>
    fetchJson(`/api/gallery?offset=${offset}&limit=${limit}&q=${encodeURIComponent(q)}`),
  neighbours: (key, k, conditions) => fetchJson(`/api/neighbours?query=${encodeURIComponent(key)}` +
    `&k=${k}&conditions=${encodeURIComponent(conditions.join(','))}`),
  upload: (file, k, conditions) =>
    fetchJson(`/api/neighbours?k=${k}&conditions=${encodeURIComponent(conditions.join(','))}`,
      { method: 'POST', body: file }),
  image: (side, row) => `/api/image?side=${side}&row=${row}`,
  queryImage: (key) => `/api/image?query=${encodeURIComponent(key)}`,
  runFile: (side, path) => `/run/${side}/${path}`,
};

// The view's state, read from and written to the URL so that a view can be shared.
const url = new URLSearchParams(location.search);
const state = {
  query: url.get('query'),
  k: Number(url.get('k')) || (data ? data.k : 10),
  conditions: url.get('conditions') ? url.get('conditions').split(',') : [],
  filter: url.get('filter') || '',
  page: Number(url.get('page')) || 0,
};
let summary = null;

function saveState() {
  const p = new URLSearchParams();
  p.set('run', summary.sides.map((s) => s.link).join(','));
  if (state.query !== null) p.set('query', state.query);
  p.set('k', state.k);
  if (state.conditions.length) p.set('conditions', state.conditions.join(','));
  if (state.filter) p.set('filter', state.filter);
  if (state.page) p.set('page', state.page);
  history.replaceState(null, '', `?${p}`);
  $('share').href = location.href;
}

function element(tag, attributes = {}, ...children) {
  const e = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) e.setAttribute(name, value);
  for (const c of children) e.append(c);
  return e;
}

function say(text) { $('message').textContent = text; }

function picture(side, row, label, src = api.image(side, row)) {
  const img = element('img', { src, alt: label, title: label, loading: 'lazy' });
  img.dataset.row = row;
  return img;
}

async function showGallery() {
  const answer = await api.gallery(state.page * pageSize, pageSize, state.filter);
  const gallery = $('gallery');
  gallery.replaceChildren();
  for (const item of answer.items) {
    const img = picture(0, item.row, item.label, item.picture || api.image(0, item.row));
    img.className = 'thumb';
    img.title = [item.label, item.row === null ? 'not in the index' : `row ${item.row}`,
      ...Object.entries(item.attributes).map(([c, v]) => `${c}: ${v}`)].join('\n');
    if ((item.key ?? String(item.row)) === state.query) img.classList.add('selected');
    img.addEventListener('click', () => { state.query = item.key ?? String(item.row); query(); });
    gallery.append(img);
  }
  const pages = Math.max(1, Math.ceil(answer.matches / pageSize));
  $('page').textContent = `page ${state.page + 1} of ${pages} (${answer.matches} of ${answer.total} images)`;
  $('previous').disabled = state.page === 0;
  $('next').disabled = state.page + 1 >= pages;
}

function frame(same) {
  if (same === true) return 'same';
  if (same === false) return 'different';
  return 'unlabelled';
}

// Where a run's module looks in the query for one condition: its attention map (the answer's
// {height, width, weights}) as a heat map over the query's picture, the largest weight brightest.
function attentionMap(map, src, title) {
  const canvas = element('canvas', { width: map.width, height: map.height });
  const context = canvas.getContext('2d');
  const pixels = context.createImageData(map.width, map.height);
  const peak = Math.max(...map.weights);
  map.weights.forEach((w, i) => {
    const v = peak > 0 ? w / peak : 0;
    pixels.data.set([255, 255 * Math.max(0, 2 * v - 1), 0, 255 * (0.1 + 0.6 * v)], 4 * i);
  });
  context.putImageData(pixels, 0, 0);
  const at = map.weights.indexOf(peak);
  return element('div', { class: 'attention', title, 'data-size': `${map.height}x${map.width}`,
    'data-peak': `${Math.floor(at / map.width)},${at % map.width}` }, element('img', { src, alt: '' }), canvas);
}

// The neighbours under each condition, in the answer's order; with two runs each condition holds
// a pair of columns, run A | run B. A column's head holds its run's name and, where its module
// has them, its attention map over the query for that condition.
function showNeighbours(answer, queryImage) {
  const q = answer.sides[0].query;
  const attributes = Object.entries(q.attributes).map(([c, v]) => `${c}: ${v}`).join(', ');
  const times = answer.sides.map((side, i) =>
    `${summary.sides[i].name}: ${side.error ?? `${side.server_ms.toFixed(1)} ms`}`).join(' | ');
  // Where a column has an attention map, every column's head keeps its room, so that the
  // neighbours of a pair start at one height.
  const maps = answer.sides.some((side) => (side.conditions || []).some((c) => c.attention));
  const grid = element('div', { class: maps ? 'conditions with-maps' : 'conditions' });
  for (const condition of answer.conditions) {
    const pair = element('div', { class: 'pair' });
    answer.sides.forEach((side, i) => {
      const head = element('div', { class: 'column-head' });
      if (answer.sides.length > 1) head.append(element('h4', {}, summary.sides[i].name));
      const column = element('div', { class: 'column', 'data-side': i, 'data-condition': condition }, head);
      const found = (side.conditions || []).find((c) => c.condition === condition);
      if (found?.attention) head.append(attentionMap(found.attention, queryImage.src,
        `where ${summary.sides[i].name}'s module looks for ${condition} in the query`));
      if (!found) column.append(element('p', { class: 'missing' },
        side.error ? '—' : `${summary.sides[i].name} has no condition ${condition}`));
      for (const n of found ? found.neighbours : []) {
        const entry = element('div', { class: `neighbour ${frame(n.same)}`, 'data-row': n.row,
          'data-label': n.label, 'data-same': String(n.same) },
        picture(i, n.row, n.label), element('span', {}, n.distance.toFixed(3)));
        entry.firstChild.addEventListener('click', () => { state.query = i === 0 ? String(n.row) : n.label; query(); });
        column.append(entry);
      }
      pair.append(column);
    });
    grid.append(element('div', { class: 'condition', 'data-condition': condition },
      element('h3', {}, condition), pair));
  }
  $('results').replaceChildren(element('div', { class: 'query' }, queryImage,
    ` query ${q.label}${attributes ? ` (${attributes})` : ''} — ${times}`), grid);
}

async function query() {
  saveState();
  await showGallery().catch((e) => say(e.message));
  if (state.query === null) return;
  try {
    const answer = await api.neighbours(state.query, state.k, state.conditions);
    say('');
    const q = answer.sides[0].query;
    showNeighbours(answer, picture(0, q.row, q.label, q.row !== null ? api.image(0, q.row) : api.queryImage(answer.key)));
    if (q.row !== null) $('gallery').querySelector(`img.thumb[data-row="${q.row}"]`)?.classList.add('selected');
  } catch (e) { say(e.message); }
}

async function upload(file) {
  if (!api.upload) { say('A page written by --static cannot embed new images.'); return; }
  try {
    const answer = await api.upload(file, state.k, state.conditions);
    say('');
    showNeighbours(answer, element('img', { src: URL.createObjectURL(file), alt: 'the dropped image' }));
  } catch (e) { say(e.message); }
}

function table(header, rows) {
  return element('table', {}, element('tr', {}, ...header.map((h) => element('th', {}, h))),
    ...rows.map((r) => element('tr', {}, ...r.map((x) => element('td', {},
      x === null ? '—' : typeof x === 'number' ? String(Number(x.toPrecision(4))) : String(x))))));
}

function curves(log) {
  const keys = Object.keys(log.series).slice(0, 8);
  const box = element('div', { class: 'curves' });
  for (const key of keys) {
    const values = log.series[key];
    const finite = values.filter((v) => v !== null);
    if (!finite.length) continue;
    const lo = Math.min(...finite), hi = Math.max(...finite), w = 180, h = 60;
    const points = values.map((v, i) => v === null ? null
      : `${(i / Math.max(1, values.length - 1)) * (w - 10) + 5},${h - 5 - ((v - lo) / (hi - lo || 1)) * (h - 10)}`)
      .filter((p) => p).join(' ');
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('class', 'curves'); svg.setAttribute('width', w); svg.setAttribute('height', h);
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', points); line.setAttribute('fill', 'none'); line.setAttribute('stroke', '#36c');
    svg.append(line);
    box.append(element('div', {}, `${key} (${lo.toPrecision(3)}–${hi.toPrecision(3)})`), svg);
  }
  return box;
}

function showRuns() {
  const runs = $('runs');
  summary.sides.forEach((s, i) => {
    const box = element('div', { class: 'run', 'data-side': i }, element('h2', {}, s.name),
      element('p', {}, `${s.module} (${s.supervision}), ${s.rows} images; alignment: ${s.alignment.source}`),
      table(['condition', 'embedding', 'comparison', 'alignment accuracy'],
        s.alignment.conditions.map((c) => [c.condition, c.embedding, c.comparison, c.accuracy])),
      element('h3', {}, 'results'), table(['metric', 'value'], s.results),
      element('h3', {}, 'curves'), curves(s.curves));
    if (api.runFile) box.append(element('img', { src: api.runFile(i, 'curves.png'), alt: '', class: 'run-curves' }));
    runs.append(box);
  });
}

function conditionPicks() {
  const picks = $('condition-picks');
  for (const c of summary.conditions) {
    const box = element('input', { type: 'checkbox', value: c });
    box.checked = !state.conditions.length || state.conditions.includes(c);
    box.addEventListener('change', () => {
      const all = [...picks.querySelectorAll('input')];
      const on = all.filter((b) => b.checked).map((b) => b.value);
      state.conditions = on.length === all.length ? [] : on;
      query();
    });
    picks.append(element('label', {}, box, c));
  }
}

async function start() {
  summary = await api.summary();
  $('sources').textContent = summary.sides.map((s) => `${s.name}: ${s.rows} images`).join(' | ');
  // A link names the runs and indexes it was made for: its rows and conditions mean nothing here.
  const named = url.get('run'), ours = summary.sides.map((s) => s.link).join(',');
  if (named && named !== ours) {
    Object.assign(state, { query: null, conditions: [], filter: '', page: 0 });
    say(`This link was made for ${named.split(',').join(' and ')}, not for ${ours.split(',').join(' and ')} shown here, so its view is not opened.`);
  } else if (state.query === null && summary.queries.length) {
    state.query = summary.queries[0].key;
  }
  if (summary.queries.length) $('queries').append(element('span', {}, 'given with --query:'));
  for (const q of summary.queries) {
    const img = element('img', { class: 'thumb', src: q.row !== null ? api.image(0, q.row) : api.queryImage(q.key),
      alt: q.label, title: q.label });
    img.addEventListener('click', () => { state.query = q.key; query(); });
    $('queries').append(img);
  }
  if (data) $('k').max = data.k;
  $('k').value = state.k;
  $('k').addEventListener('change', () => { state.k = Math.min(Number($('k').max), Math.max(1, Number($('k').value) || 10)); query(); });
  $('filter').value = state.filter;
  $('filter').addEventListener('input', () => { state.filter = $('filter').value; state.page = 0; query(); });
  $('previous').addEventListener('click', () => { state.page -= 1; query(); });
  $('next').addEventListener('click', () => { state.page += 1; query(); });
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault(); drop.classList.remove('over');
    if (e.dataTransfer.files.length) upload(e.dataTransfer.files[0]);
  });
  $('upload').addEventListener('change', () => { if ($('upload').files.length) upload($('upload').files[0]); });
  if (data) drop.hidden = true;
  conditionPicks();
  showRuns();
  await query();
  document.body.dataset.ready = 'true';
}

start().catch((e) => say(e.message));

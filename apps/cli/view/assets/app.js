// zrec view's page: plain JavaScript and SVG, no library. Everything it shows comes from
// the JSON API next to it (docs/json.md, "zrec view's API"); text from the stores is only
// ever set as textContent, never parsed as HTML.
//
// The state lives in the URL's fragment, so reload and the back button work:
//   #p=0                                   PATH 0: overview and records grid
//   #p=0&sel=10:20&sample=8&seed=1&offset=0&limit=48
//   #p=0&label=cls:1&q=dog&cursor=0       the samples of label 1 holding "dog"
//   #p=0&stream=1&id=17                    one record
'use strict';

const SVG = 'http://www.w3.org/2000/svg';

// An element with attributes and children (strings become text nodes).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'onclick' || k === 'onsubmit' || k === 'onchange') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  return q.toString();
}

async function api(route, params, method) {
  const response = await fetch('api/' + route + '?' + query(params || {}), {method: method || 'GET'});
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || ('HTTP ' + response.status));
  return body;
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let u = 0;
  let v = n;
  while (v >= 1024 && u + 1 < units.length) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? n + ' B' : v.toFixed(1) + ' ' + units[u];
}

function state() {
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

function go(params) {
  location.hash = query(params);
}

function errorBox(e) {
  return el('p', {class: 'error'}, String(e.message || e));
}

// ---- the overview ------------------------------------------------------------------

// A histogram of counts in bins [edges[b], edges[b + 1]), equal-width or (sizes that
// span 64x or more) on a log scale, with the percentiles info prints marked on it and
// labelled with their values.
function histogram(title, st) {
  const W = 360, H = 120, left = 4, bottom = 18;
  const {counts, edges, scale} = st.histogram;
  const fmt = title === 'stored' || title === 'logical' ? bytes : String;  // sizes, or counts of elements
  const top = Math.max(1, ...counts);
  const plot = svg('svg', {class: 'histogram', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
                           'data-scale': scale});
  plot.append(svg('title', {}, `${title}: record counts by size${scale === 'log' ? ' (log scale)' : ''}`));
  const lo = edges[0], hi = edges[edges.length - 1];
  const log = scale === 'log';
  const f = v => log ? Math.log(Math.max(v, 1)) : v;
  const span = Math.max(1e-9, f(hi) - f(Math.max(lo, log ? 1 : lo)));
  const at = v => left + (W - 2 * left) * (f(v) - f(Math.max(lo, log ? 1 : lo))) / span;
  counts.forEach((c, i) => {
    if (c === 0) return;
    const h = Math.max(1, (H - bottom - 4) * c / top);
    const x0 = at(edges[i]), x1 = at(edges[i + 1]);
    const bar = svg('rect', {class: 'bar', x: x0, y: H - bottom - h, width: Math.max(1, x1 - x0 - 1), height: h});
    const a = edges[i], b = edges[i + 1] - 1;
    bar.append(svg('title', {}, `${a === b ? a : a + '..' + b}: ${c} records`));
    plot.append(bar);
  });
  // p50 on the first line, p99 on the second: however close the markers, the labels
  // never overlap; each reads away from the plot's nearer edge.
  [['p50', st.p50], ['p99', st.p99]].forEach(([name, v], row) => {
    const x = Math.min(at(v + 0.5), W - left);
    plot.append(svg('line', {class: 'marker', x1: x, x2: x, y1: 0, y2: H - bottom}));
    const anchor = x > W / 2 ? 'end' : 'start';
    plot.append(svg('text', {class: 'marker-label', x: anchor === 'end' ? x - 2 : x + 2, y: 10 + 12 * row,
                             'text-anchor': anchor}, `${name} ${fmt(v)}`));
  });
  plot.append(svg('text', {class: 'axis', x: left, y: H - 4}, fmt(st.min)));
  plot.append(svg('text', {class: 'axis', x: W - left, y: H - 4, 'text-anchor': 'end'},
                  fmt(st.max) + (log ? ' (log)' : '')));
  return el('figure', {class: 'hist'}, plot, el('figcaption', {}, title));
}

// A label stream's values: one bar per value, with its class name (view --labels)
// under it when the bars are few enough to label. A bar (or a row of the table) filters
// the records grid to that value.
function valuesChart(v, path, stream, length) {
  if (!v.counts) return el('p', {class: 'note'}, `more than 256 distinct values among the first ${v.sampled} records`);
  const filter = c => () => go({p: path, label: `${stream}:${c.value}`});
  const W = 360, H = 140, left = 4, bottom = 34;
  const top = Math.max(1, ...v.counts.map(c => c.count));
  const plot = svg('svg', {class: 'values', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img'});
  plot.append(svg('title', {}, 'record counts by value'));
  const bw = (W - 2 * left) / Math.max(1, v.counts.length);
  v.counts.forEach((c, i) => {
    const h = Math.max(1, (H - bottom - 4) * c.count / top);
    const label = c.name === undefined ? String(c.value) : `${c.value} ${c.name}`;
    const bar = svg('rect', {class: 'bar filter', x: left + i * bw, y: H - bottom - h, width: Math.max(1, bw - 1), height: h,
                             'data-value': c.value});
    bar.append(svg('title', {}, `${label}: ${c.count} records (click: show them)`));
    bar.addEventListener('click', filter(c));
    plot.append(bar);
    if (v.counts.length <= 24)
      plot.append(svg('text', {class: 'axis value-label', x: left + (i + 0.5) * bw, y: H - bottom + 12,
                               'text-anchor': 'middle'}, c.name === undefined ? String(c.value) : c.name));
  });
  const caption = `values of the first ${v.sampled} records: ${v.distinct} distinct` +
      (v.sampled < length ? ` (a sample: the first ${v.sampled} of ${length} records)` : '');
  const table = el('table', {class: 'stats value-counts'},
                   el('thead', {}, el('tr', {}, el('th', {}, 'value'), el('th', {}, 'name'), el('th', {}, 'records'))),
                   el('tbody', {}, v.counts.slice(0, 64).map(c => el('tr', {class: 'filter', onclick: filter(c)}, el('td', {}, String(c.value)),
                                                                      el('td', {}, c.name ?? ''), el('td', {}, String(c.count))))));
  return el('figure', {class: 'hist'}, plot, el('figcaption', {}, caption), table);
}

function statsTable(sizes) {
  const rows = Object.entries(sizes).map(([name, st]) =>
      el('tr', {}, el('th', {}, name), ...['min', 'p50', 'p99', 'max'].map(k => el('td', {}, String(st[k])))));
  return el('table', {class: 'stats'},
            el('thead', {}, el('tr', {}, el('th', {}, 'record sizes'), ...['min', 'p50', 'p99', 'max'].map(k => el('th', {}, k)))),
            el('tbody', {}, rows));
}

function facts(s) {
  const shape = s.item_shape ? '(' + s.item_shape.join(', ') + (s.item_shape.length === 1 ? ',)' : ')') : 'ndim=' + s.ndim;
  const rows = [
    ['kind', s.kind], ['dtype', s.dtype], ['shape', shape], ['codec', s.codec], ['length', String(s.length)],
    ['logical', bytes(s.logical_bytes)], ['stored', bytes(s.payload_bytes)], ['on disk', bytes(s.disk_bytes)],
    ['ratio', s.compression_ratio.toFixed(2) + 'x'], ['shards', String(s.shards)],
    ['checksum', s.codec === 'raw' ? '-' : s.checksum ? 'yes' : 'no'],
    ['dictionary', s.dict_bytes ? bytes(s.dict_bytes) + ', id ' + s.dict_id : '-'],
  ];
  return el('table', {class: 'facts'}, el('tbody', {}, rows.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v)))));
}

function verifyPanel(path, stream) {
  const out = el('div', {class: 'verify'});
  const button = el('button', {type: 'button', class: 'verify-button'}, 'Verify');
  button.addEventListener('click', async () => {
    button.disabled = true;
    out.replaceChildren(el('progress', {max: 1, value: 0}), el('span', {class: 'note'}, ' starting'));
    try {
      const {job} = await api('verify', {path, stream}, 'POST');
      for (;;) {
        const st = await api('verify', {job});
        const bar = el('progress', {max: Math.max(1, st.total), value: st.done});
        const words = `${st.phase}: ${st.done} / ${st.total} records, ${bytes(st.bytes)}`;
        const problems = el('ul', {class: 'problems'}, st.problems.map(p => el('li', {},
            p.id === null ? '' : el('a', {href: '#' + query({p: path, stream, id: p.id})}, 'record ' + p.id + ': '),
            `${p.rule}: ${p.message}`)));
        if (!st.finished) {
          out.replaceChildren(bar, el('span', {class: 'note'}, ' ' + words), problems);
          await new Promise(r => setTimeout(r, 300));
          continue;
        }
        const verdict = st.error ? el('p', {class: 'error'}, st.error)
            : st.valid ? el('p', {class: 'ok'}, `valid: ${st.records_decoded} records decoded`)
                       : el('p', {class: 'error'}, `${st.problem_count} problem${st.problem_count === 1 ? '' : 's'}`);
        out.replaceChildren(verdict, problems, el('ul', {class: 'notes'}, (st.notes || []).map(n => el('li', {}, n))));
        break;
      }
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
    button.disabled = false;
  });
  return el('div', {}, button, out);
}

async function overview(path, dims) {
  const o = await api('overview', {path, dims: dims ? 1 : null});
  const cards = o.streams.map((s, i) => {
    const {dims: perDim, ...sizes} = s.record_sizes;
    // A Ragged store's dimensions: from the table for ndim 1 (the element count); for
    // more, on demand, since every record's shape prefix must be read.
    if (perDim && s.ndim > 1) perDim.forEach((st, d) => { sizes['dim ' + d] = st; });
    const dimsButton = s.kind === 'ragged' && s.ndim > 1 && !perDim
        ? el('button', {type: 'button', class: 'dims-button', onclick: () => go({...state(), p: path, dims: 1})},
             'Histograms per dimension (reads every record)')
        : null;
    const shape = s.item_shape ? '(' + s.item_shape.join(', ') + ')' : 'ndim=' + s.ndim;
    // A root's streams start folded, so that its records are in view.
    return el('details', {class: 'store', open: !o.root},
              el('summary', {}, el('h3', {}, s.name), ` ${s.kind} ${s.dtype} ${shape}, ${s.codec}, ${s.length} records`),
              s.writer_active ? el('p', {class: 'warning'}, 'a writer is appending: this is the last published state (reload for newer)') : null,
              s.sampled_records ? el('p', {class: 'note sampled'},
                  `sampled: the sizes and histograms come from ${s.sampled_records} of the ${s.length} records of this remote store's table`) : null,
              el('div', {class: 'store-body'},
                 facts(s),
                 el('div', {},
                    s.values ? valuesChart(s.values, path, s.name, s.length) : null,
                    el('div', {class: 'hists'}, Object.entries(sizes).map(([name, st]) => histogram(name, st))),
                    statsTable(sizes), dimsButton)),
              verifyPanel(path, i));
  });
  return el('div', {class: 'overview'},
            o.lengths_agree ? null : el('p', {class: 'warning'}, 'the streams hold different numbers of records'),
            cards);
}

// ---- records -----------------------------------------------------------------------

function sparkline(values) {
  const W = 240, H = 40;
  const nums = values.filter(v => v !== null);
  if (nums.length < 2) return null;
  const lo = Math.min(...nums), hi = Math.max(...nums);
  const y = v => H - 2 - (H - 4) * (hi === lo ? 0.5 : (v - lo) / (hi - lo));
  const points = [];
  values.forEach((v, i) => {
    if (v !== null) points.push(`${(W * i / (values.length - 1)).toFixed(1)},${y(v).toFixed(1)}`);
  });
  return svg('svg', {class: 'sparkline', viewBox: `0 0 ${W} ${H}`, width: W, height: H},
             svg('polyline', {points: points.join(' ')}));
}

function pictureUrl(path, stream, id, size) {
  return 'api/picture?' + query({path, stream, id, size});
}

function look(cell, path, id, full) {
  const where = {path, stream: cell.stream, id};
  switch (cell.look) {
    case 'image':
    case 'pixels':
      return el('img', {class: full ? 'full' : 'thumb', src: pictureUrl(path, cell.stream, id, full ? 'full' : 'thumb'),
                        alt: `record ${id}`});
    case 'json':
    case 'text':
      return el('pre', {class: 'cell-text ' + cell.look}, cell.text);
    case 'numbers': {
      const stats = cell.min === null ? null
          : el('div', {class: 'note'}, `min ${cell.min}  max ${cell.max}  mean ${Number(cell.mean).toPrecision(6)}` +
               (cell.nan_count ? `  nan ${cell.nan_count}` : ''));
      return el('div', {class: 'numbers'}, el('pre', {class: 'cell-text'}, cell.text), stats, sparkline(cell.sparkline));
    }
    case 'bytes':
      return el('code', {class: 'hex'}, cell.hex);
    case 'empty':
      return el('span', {class: 'note'}, '(empty)');
    case 'large':
      return el('a', {href: '#' + query({p: path, stream: cell.stream, id})}, 'large record: open it');
    default:
      return el('span', {class: 'note'}, '?');
  }
}

// A token record of a stream with a vocabulary (view --vocab): the text it encodes.
function tokensText(cell) {
  return cell.tokens_text === undefined ? null : el('pre', {class: 'cell-text tokens'}, cell.tokens_text);
}

function cellView(cell, path, id) {
  const shape = cell.shape ? '(' + cell.shape.join(', ') + ')' : '';
  return el('div', {class: 'cell'},
            cell.error ? el('p', {class: 'error'}, cell.error) : tokensText(cell),
            cell.error ? null : look(cell, path, id, false),
            cell.label_name === undefined ? null : el('div', {class: 'label-name'}, cell.label_name),
            el('div', {class: 'cell-meta'},
               el('a', {href: '#' + query({p: path, stream: cell.stream, id})}, shape || 'open'),
               cell.logical_bytes === undefined ? '' : ' ' + bytes(cell.logical_bytes)));
}

// What a filtered page shows of its filter, with a button that clears it.
function filterChip(path, st, page) {
  const f = page.filter;
  if (!f) return null;
  const words = [];
  if (f.label) words.push(`${f.label.stream} = ${f.label.name === undefined ? f.label.value : f.label.name}`);
  if (f.q !== null) words.push(`search "${f.q}"`);
  const clear = el('button', {type: 'button', class: 'chip-clear', title: 'show every record',
                              onclick: () => go({p: path, sel: st.sel, limit: st.limit})}, '\u00d7');
  return el('span', {class: 'chip'}, 'filtered: ' + words.join(', ') + ' ', clear);
}

function controls(path, st, page) {
  const sel = el('input', {name: 'sel', value: st.sel || '', placeholder: 'all (e.g. 0:100, ::10, -5:)', size: 18});
  const sample = el('input', {name: 'sample', value: st.sample || '', placeholder: 'N', size: 5, inputmode: 'numeric'});
  const seed = el('input', {name: 'seed', value: st.seed || '', placeholder: '0', size: 5, inputmode: 'numeric'});
  const limit = el('input', {name: 'limit', value: st.limit || '48', size: 4, inputmode: 'numeric'});
  const form = el('form', {class: 'controls'},
                  el('label', {}, 'selection ', sel), el('label', {}, 'sample ', sample),
                  el('label', {}, 'seed ', seed), el('label', {}, 'per page ', limit),
                  el('button', {type: 'submit'}, 'Show'));
  form.addEventListener('submit', e => {
    e.preventDefault();
    go({p: path, sel: sel.value.trim(), sample: sample.value.trim(), seed: seed.value.trim(), limit: limit.value.trim()});
  });
  const q = el('input', {name: 'q', type: 'search', value: st.q || '', placeholder: 'key or text', size: 16});
  const searchForm = el('form', {class: 'controls search'}, el('label', {}, 'search ', q), el('button', {type: 'submit'}, 'Search'));
  searchForm.addEventListener('submit', e => {
    e.preventDefault();
    go({p: path, sel: st.sel, label: st.label, q: q.value.trim(), limit: st.limit});
  });
  const jump = el('input', {name: 'id', placeholder: 'ID', size: 8});
  const jumpForm = el('form', {class: 'controls'}, el('label', {}, 'jump to record ', jump), el('button', {type: 'submit'}, 'Go'));
  jumpForm.addEventListener('submit', e => {
    e.preventDefault();
    if (jump.value.trim() !== '') go({p: path, stream: 0, id: jump.value.trim()});
  });
  if (page.filter) {
    // A filtered page: the matches found from `cursor` on; the next page goes on from
    // where this one stopped looking.
    const cursor = Number(st.cursor || 0);
    const more = page.next_cursor !== null;
    const nav = el('div', {class: 'pager'}, filterChip(path, st, page),
                   el('button', {type: 'button', disabled: cursor === 0, onclick: () => go({...st, cursor: null})}, 'first'),
                   el('span', {class: 'note'}, ` ${page.rows.length} matching in positions ${cursor}-${more ? page.next_cursor - 1 : page.selected - 1}` +
                      ` of ${page.selected} selected${more ? '' : ' (all searched)'} `),
                   el('button', {type: 'button', disabled: !more, onclick: () => go({...st, cursor: page.next_cursor})}, 'next'));
    return el('div', {}, form, searchForm, jumpForm, nav);
  }
  const offset = Number(st.offset || 0), size = page.limit;
  const nav = el('div', {class: 'pager'},
                 el('button', {type: 'button', disabled: offset === 0, onclick: () => go({...st, offset: Math.max(0, offset - size)})}, 'previous'),
                 el('span', {class: 'note'}, ` rows ${page.total === 0 ? 0 : offset + 1}-${Math.min(page.total, offset + size)} of ${page.total}` +
                    (page.sample === null ? ` (${page.selected} selected of ${page.length})` : ` drawn from ${page.selected} (seed ${page.seed})`) + ' '),
                 el('button', {type: 'button', disabled: offset + size >= page.total, onclick: () => go({...st, offset: offset + size})}, 'next'));
  return el('div', {}, form, searchForm, jumpForm, nav);
}

// A filtered page: each request examines a bounded part of the selection, so ask on
// (from its next_cursor) until the page is full, the selection is searched, or enough
// requests were made for one page.
async function filteredPage(path, st) {
  const limit = Number(st.limit || 48);
  const params = {path, sel: st.sel, label: st.label, q: st.q, cursor: st.cursor, limit};
  let page = await api('records', params);
  for (let asks = 1; page.next_cursor !== null && page.rows.length < limit && asks < 16; ++asks) {
    const more = await api('records', {...params, cursor: page.next_cursor, limit: limit - page.rows.length});
    more.rows = page.rows.concat(more.rows);
    more.cursor = page.cursor;
    more.examined += page.examined;
    page = more;
  }
  return page;
}

async function records(path, st) {
  let page;
  try {
    page = st.label || st.q ? await filteredPage(path, st)
        : await api('records', {path, sel: st.sel, sample: st.sample, seed: st.seed, offset: st.offset, limit: st.limit});
  } catch (e) {
    return el('div', {}, controls(path, st, {limit: Number(st.limit || 48), total: 0, selected: 0, length: 0, sample: null,
                                             rows: [], filter: null}), errorBox(e));
  }
  const multi = page.streams.length > 1;
  const head = multi ? el('div', {class: 'row head'}, el('div', {class: 'row-id'}, 'sample'),
                          page.streams.map(name => el('div', {class: 'cell'}, name))) : null;
  const rows = page.rows.map(row =>
      el('div', {class: 'row', 'data-id': row.id},
         el('div', {class: 'row-id'}, el('a', {href: '#' + query({p: path, stream: 0, id: row.id})}, '#' + row.id),
            row.key === undefined ? null : el('div', {class: 'key'}, row.key === null ? '' : row.key)),
         row.cells.map(cell => cellView(cell, path, row.id))));
  return el('div', {}, controls(path, st, page),
            el('div', {class: multi ? 'rows table' : 'rows grid', id: 'rows'}, head, rows));
}

// ---- one record --------------------------------------------------------------------

async function recordPage(path, st, info) {
  const stream = Number(st.stream || 0);
  const names = info.streams;
  const r = await api('record', {path, stream, id: st.id});
  const facts = [
    ['record', String(r.id)], ['stream', names[stream]], ['shape', r.shape ? '(' + r.shape.join(', ') + ')' : '-'],
    ['stored', bytes(r.stored_bytes) + ` (${r.stored_bytes} bytes)`], ['logical', bytes(r.logical_bytes) + ` (${r.logical_bytes} bytes)`],
    ['shard', `${r.shard} (data_${r.shard}.zr)`], ['offset', String(r.offset)], ['codec', r.codec],
    ['decoded', r.decoded ? 'yes' : 'no: ' + r.error],
  ];
  const hex = el('pre', {class: 'hexdump'});
  const hexButton = el('button', {type: 'button'}, 'Show stored bytes (hex)');
  hexButton.addEventListener('click', async () => {
    try {
      const h = await api('hex', {path, stream, id: r.id, offset: 0, length: 4096});
      hex.textContent = h.hex.join('\n') + (h.length < h.stored_bytes ? `\n... ${h.stored_bytes - h.length} more bytes` : '');
    } catch (e) {
      hex.textContent = String(e.message);
    }
  });
  const streamLinks = names.length > 1
      ? el('p', {}, 'streams: ', names.map((n, i) => i === stream ? el('b', {}, n + ' ') : el('a', {href: '#' + query({p: path, stream: i, id: r.id})}, n + ' ')))
      : null;
  return el('div', {class: 'record'},
            el('p', {}, el('a', {href: '#' + query({p: path})}, 'back to the records'), ' ',
               el('a', {href: '#' + query({p: path, stream, id: Math.max(0, r.id - 1)})}, 'previous'), ' ',
               el('a', {href: '#' + query({p: path, stream, id: r.id + 1})}, 'next')),
            streamLinks,
            el('table', {class: 'facts'}, el('tbody', {}, facts.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v))))),
            el('p', {}, el('a', {class: 'download', href: 'api/npy?' + query({path, stream, id: r.id}), download: `record-${r.id}.npy`}, 'Download .npy'),
               r.npy_bytes === undefined ? '' : ` (${bytes(r.npy_bytes)})`),
            r.decoded ? el('div', {class: 'full'}, tokensText(r), look({...r, stream}, path, r.id, true)) : null,
            hexButton, hex);
}

// ---- the page ----------------------------------------------------------------------

let paths = null;

async function render() {
  const main = document.getElementById('main');
  try {
    if (paths === null) {
      const p = await api('paths');
      paths = p.paths;
      document.getElementById('footer').textContent = 'zrec ' + p.version + ': read-only';
    }
    const st = state();
    const path = Math.min(paths.length - 1, Math.max(0, Number(st.p || 0)));
    document.getElementById('tabs').replaceChildren(...paths.map(p =>
        el('a', {href: '#' + query({p: p.index}), class: p.index === path ? 'tab active' : 'tab'}, p.path)));
    if (st.id !== undefined) {
      main.replaceChildren(await recordPage(path, st, paths[path]));
    } else {
      const [ov, rec] = await Promise.all([overview(path, st.dims === '1').catch(errorBox), records(path, st)]);
      main.replaceChildren(el('h2', {}, 'Overview'), ov, el('h2', {}, 'Records'), rec);
    }
  } catch (e) {
    main.replaceChildren(errorBox(e));
  }
  document.body.dataset.ready = 'yes';
}

window.addEventListener('hashchange', () => {
  document.body.dataset.ready = 'no';
  render();
});
render();

// Instances: the catalog as a sortable, filterable table (filters and sorting done by
// GET /v1/instances, so they mean exactly what they mean in the API and the CLI), a column picker,
// CSV download, permalinks; and one instance's every fact with its source (#/instances/<id>).
'use strict';

(() => {
  const {h, fmt, num, usd, api} = LW;

  const COLUMNS = [
    {key: 'id', label: 'Instance', show: true},
    {key: 'provider', label: 'Provider', show: true},
    {key: 'gpu_model', label: 'GPU', show: true},
    {key: 'gpu_count', label: 'GPUs', num: true, show: true, high: true},
    {key: 'gpu_memory_gb', label: 'GPU mem', unit: 'GB', num: true, show: true, high: true},
    {key: 'price_usd_per_gpu_hour', label: 'Price/GPU', unit: '$/h', num: true, show: true, digits: 2},
    {key: 'price_usd_per_hour', label: 'Price', unit: '$/h', num: true, show: true, digits: 2},
    {key: 'intra_node_fabric', label: 'Fabric', show: true},
    {key: 'nvlink_gbytes_per_s', label: 'NVLink', unit: 'GB/s', num: true, show: true, high: true},
    {key: 'nvlink_domain_gpus', label: 'NVLink domain', unit: 'GPUs', num: true, show: true, high: true},
    {key: 'network_type', label: 'Network', show: true},
    {key: 'network_gbits_per_s', label: 'Net', unit: 'Gbit/s', num: true, show: true, high: true},
    {key: 'gpudirect_rdma', label: 'RDMA', show: true},
    {key: 'regions', label: 'Regions', show: true, sortable: false},
    {key: 'vcpus', label: 'vCPUs', num: true, high: true},
    {key: 'memory_gib', label: 'Host mem', unit: 'GiB', num: true, high: true},
    {key: 'network_nics', label: 'NICs', num: true, high: true},
    {key: 'network_nic_gbits_per_s', label: 'NIC', unit: 'Gbit/s', num: true, high: true},
    {key: 'frontend_network_gbits_per_s', label: 'Front-end net', unit: 'Gbit/s', num: true, high: true},
    {key: 'spot_price_usd_per_hour', label: 'Spot', unit: '$/h', num: true, digits: 2},
    {key: 'price_region', label: 'Price region'},
    {key: 'price_as_of', label: 'Price as of'},
    {key: 'name', label: 'Type name'},
  ];
  const BY_KEY = Object.fromEntries(COLUMNS.map(c => [c.key, c]));
  const DEFAULT_COLS = COLUMNS.filter(c => c.show).map(c => c.key);

  // Filters: the query parameters of GET /v1/instances.
  const FILTERS = [
    {key: 'provider', label: 'Provider', type: 'select-provider'},
    {key: 'gpu', label: 'GPU', hint: 'id or family', type: 'text', list: 'lw-gpu-list', placeholder: 'e.g. H100'},
    {key: 'min_gpus', label: 'Min GPUs', type: 'number', min: 1, step: 1},
    {key: 'min_gpu_memory_gb', label: 'Min GPU memory', hint: 'GB', type: 'number', min: 0},
    {key: 'fabric', label: 'Fabric', type: 'select', options: ['nvswitch', 'nvlink', 'pcie', 'infinity-fabric', 'none']},
    {key: 'min_nvlink_gbytes_per_s', label: 'Min NVLink', hint: 'GB/s', type: 'number', min: 0},
    {key: 'min_network_gbits_per_s', label: 'Min network', hint: 'Gbit/s', type: 'number', min: 0},
    {key: 'rdma', label: 'GPUDirect RDMA', type: 'select', options: [['true', 'yes'], ['false', 'no']]},
    {key: 'max_price', label: 'Max price', hint: '$/h', type: 'number', min: 0, step: 'any'},
    {key: 'region', label: 'Region', type: 'text', list: 'lw-region-list', placeholder: 'e.g. us-east-1'},
  ];

  // Fabrics without a direct GPU-to-GPU link, and what the page says instead of a link figure.
  const NO_LINK = {pcie: 'no direct GPU-to-GPU link: the GPUs talk over PCIe', none: 'no direct GPU-to-GPU link: one GPU'};

  const section = document.getElementById('view-instances');
  let built = false;
  let form, tableWrap, countEl, hiddenEl, picker, filtersBox;
  let choices = {};  // filter key -> Map(lower case -> value) of the values it knows (GPU, region)
  let state = {filters: {}, sort: 'id', cols: DEFAULT_COLS.slice()};
  let rows = [];
  let requestSeq = 0;

  function stateFromParams(params) {
    const filters = {};
    for (const f of FILTERS) if (params.get(f.key)) filters[f.key] = params.get(f.key);
    const cols = (params.get('cols') || '').split(',').filter(k => BY_KEY[k]);
    return {filters, sort: params.get('sort') || 'id', cols: cols.length ? cols : DEFAULT_COLS.slice()};
  }
  function paramsFromState() {
    const p = Object.assign({}, state.filters);
    if (state.sort && state.sort !== 'id') p.sort = state.sort;
    if (state.cols.join(',') !== DEFAULT_COLS.join(',')) p.cols = state.cols.join(',');
    return p;
  }

  function build(instances, gpus) {
    const providers = [...new Set(instances.map(i => i.provider))].sort();
    const regions = [...new Set(instances.flatMap(i => i.regions || []))].sort();
    const families = new Set();
    for (const g of gpus) { families.add(g.id); const dash = g.id.indexOf('-'); if (dash > 0) families.add(g.id.slice(0, dash)); }
    const byLower = values => new Map([...values].map(v => [v.toLowerCase(), v]));
    choices = {gpu: byLower(families), region: byLower(regions)};

    form = h('form', {class: 'filters panel', role: 'search', 'aria-label': 'Filter instances', onsubmit: e => e.preventDefault()});
    for (const f of FILTERS) {
      let control;
      const id = 'f-' + f.key;
      if (f.type === 'select' || f.type === 'select-provider') {
        const options = f.type === 'select-provider' ? providers : f.options;
        control = h('select', {id, name: f.key}, h('option', {value: ''}, 'any'),
                    options.map(o => Array.isArray(o) ? h('option', {value: o[0]}, o[1]) : h('option', {value: o}, o)));
      } else {
        control = h('input', {id, name: f.key, type: f.type === 'number' ? 'number' : 'text', min: f.min, step: f.step || (f.type === 'number' ? 'any' : null),
                              list: f.list, placeholder: f.placeholder || '', autocomplete: 'off', inputmode: f.type === 'number' ? 'decimal' : null});
      }
      control.setAttribute('aria-describedby', id + '-msg');
      form.append(h('label', {class: 'field', for: id}, h('span', {}, f.label, f.hint ? h('small', {}, ' (' + f.hint + ')') : null), control),
                  h('p', {class: 'field-msg', id: id + '-msg', 'aria-live': 'polite'}));
    }
    form.append(h('div', {}, h('button', {type: 'button', onclick: () => { state.filters = {}; state.sort = 'id'; syncForm(); fieldMessages({}); update(); }}, 'Reset filters')));
    form.append(h('datalist', {id: 'lw-gpu-list'}, [...families].sort().map(v => h('option', {value: v}))));
    form.append(h('datalist', {id: 'lw-region-list'}, regions.map(v => h('option', {value: v}))));
    // Typing waits for a pause (a request per pause, not per key); a choice from a list applies at once.
    const typed = LW.debounce(applyForm, 300);
    form.addEventListener('input', e => (e.target.tagName === 'SELECT' ? applyForm() : typed()));

    countEl = h('span', {class: 'count', 'aria-live': 'polite'});
    hiddenEl = h('span', {class: 'note'});
    picker = h('details', {class: 'picker'},
      h('summary', {class: 'button', role: 'button'}, 'Columns'),
      h('fieldset', {class: 'menu'}, h('legend', {class: 'sr-only'}, 'Columns to show'),
        COLUMNS.map(c => h('label', {class: 'check'},
          h('input', {type: 'checkbox', name: 'col', value: c.key, disabled: c.key === 'id',
                      onchange: e => toggleColumn(c.key, e.target.checked)}),
          c.label + (c.unit ? ' (' + c.unit + ')' : '')))));
    document.addEventListener('click', e => { if (picker.open && !picker.contains(e.target)) picker.open = false; });
    picker.addEventListener('keydown', e => { if (e.key === 'Escape') { picker.open = false; picker.querySelector('summary').focus(); } });

    const csvButton = h('button', {type: 'button', onclick: downloadCsv}, 'Download CSV');
    const linkButton = h('button', {type: 'button', onclick: e => LW.copyText(location.href, e.currentTarget)}, 'Copy link');
    tableWrap = h('div', {class: 'table-wrap', id: 'instances-table'});
    section.replaceChildren(
      h('h1', {id: 'h-instances'}, 'GPU instances'),
      h('p', {class: 'lead'}, 'Every instance type of the catalog with the links that matter for distributed jobs. ',
        'Filters and sorting are the API\'s: an unknown value never matches a filter, and the page says how many it hid. ',
        'Click an instance for every fact with its source.'),
      // On a phone the filters fold away (the table is what the page is for); open on a wider screen.
      filtersBox = h('details', {class: 'filters', open: !window.matchMedia('(max-width: 640px)').matches},
        h('summary', {}, 'Filters'), form),
      h('div', {class: 'toolbar'}, countEl, hiddenEl, h('span', {class: 'spacer'}), picker, csvButton, linkButton),
      tableWrap);
    built = true;
  }

  function syncForm() {
    for (const f of FILTERS) form.elements[f.key].value = state.filters[f.key] || '';
    for (const box of picker.querySelectorAll('input[name=col]')) box.checked = state.cols.includes(box.value);
  }
  // The form's filters, and a hint for each value that cannot be valid yet: the API would refuse it,
  // so it is not sent while the user is still typing it.
  function readForm() {
    const filters = {}, waiting = {};
    for (const f of FILTERS) {
      const control = form.elements[f.key];
      const v = control.value.trim();
      const hint = notYetValid(f, control, v);
      if (hint) waiting[f.key] = hint;
      else if (v !== '') filters[f.key] = v;
    }
    return {filters, waiting};
  }
  // A number the browser cannot read or that breaks the field's min/step; the start of a known GPU
  // or region ("us-ea"). Anything else goes to the API, which names what is wrong with it.
  function notYetValid(f, control, v) {
    if (f.type === 'number') return control.validity.valid ? null : control.validationMessage || 'not a number';
    const known = choices[f.key];
    if (!known || v === '' || known.has(v.toLowerCase())) return null;
    const starts = [...known].filter(([lower]) => lower.startsWith(v.toLowerCase())).map(([, value]) => value);
    return starts.length ? 'keep typing: ' + starts.slice(0, 3).join(', ') + (starts.length > 3 ? ', …' : '') : null;
  }
  function applyForm() {
    const {filters, waiting} = readForm();
    fieldMessages(waiting);
    if (Object.keys(waiting).length) return;
    // Nothing new (a list's choice already sent what was typed); after an error, send again.
    if (JSON.stringify(filters) === JSON.stringify(state.filters) && rows.length) return;
    state.filters = filters;
    update();
  }
  // Hints (or the API's error) under the fields they concern; every other field's message cleared.
  function fieldMessages(messages, invalid) {
    for (const f of FILTERS) {
      const control = form.elements[f.key];
      const msg = document.getElementById(control.id + '-msg');
      msg.textContent = messages[f.key] ? f.label + ': ' + messages[f.key] : '';
      msg.classList.toggle('error', !!invalid);
      if (invalid && messages[f.key]) control.setAttribute('aria-invalid', 'true'); else control.removeAttribute('aria-invalid');
    }
  }
  function toggleColumn(key, on) {
    const set = new Set(state.cols);
    if (on) set.add(key); else set.delete(key);
    state.cols = COLUMNS.map(c => c.key).filter(k => set.has(k));
    LW.setState('instances', paramsFromState());
    renderTable();
  }

  async function update() {
    LW.setState('instances', paramsFromState());
    const active = Object.keys(state.filters).length;
    filtersBox.querySelector('summary').textContent = 'Filters' + (active ? ` (${active} active)` : '');
    const query = new URLSearchParams(Object.assign({}, state.filters, {sort: state.sort, limit: '1000'}));
    const seq = ++requestSeq;
    try {
      // Unfiltered in id order is the list the pickers already fetched: no second request.
      const unfiltered = !Object.keys(state.filters).length && state.sort === 'id';
      const r = unfiltered ? {items: await LW.allInstances(), excluded_unknown: {}} : await api('/v1/instances?' + query.toString());
      if (unfiltered) r.total = r.items.length;
      if (seq !== requestSeq) return;
      LW.clearError();
      fieldMessages({});
      rows = r.items;
      countEl.textContent = r.total + (r.total === 1 ? ' instance' : ' instances');
      const hidden = Object.entries(r.excluded_unknown || {});
      hiddenEl.textContent = hidden.length
        ? 'hidden because unknown: ' + hidden.map(([field, n]) => n + ' × ' + fieldLabel(field)).join(', ') : '';
      renderTable();
      if (!performance.getEntriesByName('lw-table-ready').length) performance.mark('lw-table-ready');
    } catch (err) {
      if (seq !== requestSeq) return;
      // The rows of the previous filter no longer answer this one: clear them, say why.
      rows = [];
      hiddenEl.textContent = '';
      const f = FILTERS.find(x => err.problem && x.key === err.problem.field);
      if (!f) {
        LW.showError(err, 'Filter');
        countEl.textContent = 'no instances: fix the filter named above';
        renderTable();
        return;
      }
      // The API names the filter it refuses: its message goes under that field.
      fieldMessages({[f.key]: err.message.replace(f.key + ': ', '')}, true);
      countEl.textContent = '';
      tableWrap.replaceChildren(h('p', {class: 'note'}, `No instances: the ${f.label} filter is not valid (see the message under it).`));
    }
  }

  // The API counts hidden rows by JSON field: name each as the detail view (or the table) does.
  function fieldLabel(key) {
    if (FIELD_INFO[key]) return FIELD_INFO[key][0];
    if (BY_KEY[key]) return BY_KEY[key].label;
    return GPU_INFO[key] ? 'GPU ' + GPU_INFO[key][0] : key;
  }

  // A column's first click puts the better end on top: the most GPUs, memory, link and network
  // bandwidth (`high` columns) first, the lowest price first; the next click reverses it.
  function nextSort(c, sorted) {
    if (sorted === 'ascending') return '-' + c.key;
    if (sorted === 'descending') return c.key;
    return c.high ? '-' + c.key : c.key;
  }
  function sortState(key) {
    if (state.sort === key) return 'ascending';
    if (state.sort === '-' + key) return 'descending';
    return null;
  }

  // "–" is unknown (the footer says so). A feature the machine does not have is not unknown: a PCIe or
  // single-GPU machine has no direct GPU-to-GPU link, and an instance type may list no region.
  function absent(obj, key) {
    const v = obj[key];
    if ((key === 'nvlink_gbytes_per_s' || key === 'nvlink_domain_gpus') && (v === null || v === undefined) &&
        NO_LINK[obj.intra_node_fabric])
      return h('span', {class: 'none', title: NO_LINK[obj.intra_node_fabric]}, 'none');
    // A GPU model (no fabric of its own): the contract's null NVLink figure means the card has none.
    if (!('intra_node_fabric' in obj) && (key === 'nvlink_gbytes_per_s' || key === 'nvlink_generation') &&
        (v === null || v === undefined))
      return h('span', {class: 'none', title: 'this GPU model has no NVLink: its GPUs talk over PCIe'}, 'none');
    if (key === 'regions' && Array.isArray(v) && !v.length)
      return h('span', {class: 'none', title: 'the catalog lists no region for this instance type'}, 'none listed');
    return null;
  }

  // An id wraps after its separators (provider:, dots, dashes, underscores), not mid-word.
  function breakable(id) {
    return id.split(/(?<=[:._-])/).flatMap((part, i) => i ? [h('wbr'), part] : [part]);
  }

  function cell(inst, col) {
    const v = inst[col.key];
    if (col.key === 'id') return h('a', {href: LW.hashFor('instances', null, inst.id)}, breakable(inst.id));
    const none = absent(inst, col.key);
    if (none) return none;
    if (col.key === 'regions') {
      if (!v || !v.length) return fmt(null);
      return h('span', {title: v.join(', ')}, v.slice(0, 2).join(', ') + (v.length > 2 ? ' +' + (v.length - 2) : ''));
    }
    return fmt(v, col.digits);
  }

  function renderTable() {
    const cols = state.cols.map(k => BY_KEY[k]);
    const head = h('tr', {}, cols.map(c => {
      const sorted = sortState(c.key);
      const label = [c.label, c.unit ? h('small', {class: 'note'}, ' ' + c.unit) : null];
      if (c.sortable === false) return h('th', {scope: 'col', class: c.num ? 'num' : null}, label);
      return h('th', {scope: 'col', class: c.num ? 'num' : null, 'aria-sort': sorted},
        h('button', {type: 'button', class: 'sort', 'data-sort': c.key,
                     title: 'Sort by ' + c.label + (nextSort(c, sorted).startsWith('-') ? ', largest first' : ', smallest first'),
                     onclick: () => { state.sort = nextSort(c, sorted); update(); }},
          label, h('span', {class: 'arrow', 'aria-hidden': 'true'}, sorted === 'ascending' ? '▲' : sorted === 'descending' ? '▼' : '↕')));
    }));
    const body = h('tbody', {}, rows.map(inst => h('tr', {'data-id': inst.id},
      cols.map(c => h(c.key === 'id' ? 'th' : 'td', {class: c.num ? 'num' : (c.key === 'id' ? 'mono' : null), scope: c.key === 'id' ? 'row' : null}, cell(inst, c))))));
    const table = h('table', {}, h('caption', {class: 'sr-only'}, 'GPU instances, ' + rows.length + ' rows' +
      (state.sort ? ', sorted by ' + state.sort.replace(/^-/, '') + (state.sort.startsWith('-') ? ' descending' : ' ascending') : '')),
      h('thead', {}, head), body);
    if (!rows.length) tableWrap.replaceChildren(h('p', {class: 'note', style: null}, 'No instance matches these filters.'));
    else tableWrap.replaceChildren(table);
  }

  function csvEscape(v) {
    if (v === null || v === undefined) return '';
    const s = Array.isArray(v) ? v.join(';') : String(v);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function downloadCsv() {
    const cols = state.cols;
    const lines = [cols.join(',')].concat(rows.map(r => cols.map(k => csvEscape(r[k])).join(',')));
    LW.download('linkwise-instances.csv', lines.join('\r\n') + '\r\n', 'text/csv');
  }

  LW.register('instances', {
    async render(params) {
      if (!built) {
        section.replaceChildren(h('h1', {id: 'h-instances'}, 'GPU instances'), h('p', {class: 'note'}, 'Loading the catalog…'));
        const [instances, gpus] = await Promise.all([LW.allInstances(), LW.gpus()]);
        build(instances, gpus);
      }
      const wanted = stateFromParams(params);
      const same = JSON.stringify(wanted) === JSON.stringify(state) && rows.length;
      state = wanted;
      syncForm();
      if (!same) await update();
    },
  });

  // --- one instance: every fact and its source ---
  const FIELD_INFO = {
    id: ['ID'], provider: ['Provider'], name: ['Type name'], gpu_model: ['GPU'], gpu_count: ['GPUs'],
    gpu_memory_gb: ['GPU memory', 'GB per GPU'], vcpus: ['vCPUs'], memory_gib: ['Host memory', 'GiB'],
    intra_node_fabric: ['Intra-node fabric'], nvlink_gbytes_per_s: ['NVLink', 'GB/s per GPU, both directions'],
    nvlink_domain_gpus: ['NVLink domain', 'GPUs one GPU reaches over NVLink'], network_type: ['Network'],
    network_gbits_per_s: ['GPU fabric network', 'Gbit/s'], network_nics: ['Fabric NICs'],
    network_nic_gbits_per_s: ['One fabric NIC', 'Gbit/s'], frontend_network_gbits_per_s: ['Front-end network', 'Gbit/s'],
    gpudirect_rdma: ['GPUDirect RDMA'], price_usd_per_hour: ['On-demand price', 'per hour'],
    price_usd_per_gpu_hour: ['Price per GPU', 'per GPU-hour, derived'], spot_price_usd_per_hour: ['Spot price', 'per hour'],
    price_region: ['Price region'], price_as_of: ['Price as of'], regions: ['Regions'],
  };
  const GPU_INFO = {
    vendor: ['Vendor'], architecture: ['Architecture'], memory_gb: ['Memory', 'GB'], hbm_gbytes_per_s: ['Memory bandwidth', 'GB/s'],
    bf16_dense_tflops: ['BF16 dense', 'TFLOPS'], fp16_dense_tflops: ['FP16 dense', 'TFLOPS'], fp8_dense_tflops: ['FP8 dense', 'TFLOPS'],
    fp4_dense_tflops: ['FP4 dense', 'TFLOPS'], nvlink_gbytes_per_s: ['NVLink', 'GB/s'], nvlink_generation: ['NVLink generation'],
    nvlink_domain_max_gpus: ['Largest NVLink domain', 'GPUs'], pcie_gen: ['PCIe generation'], tdp_w: ['TDP', 'W'],
  };
  const MONEY = new Set(['price_usd_per_hour', 'price_usd_per_gpu_hour', 'spot_price_usd_per_hour']);

  // The nvlink_* fields hold whatever links the GPUs directly: name it by the machine's fabric
  // (AMD's is Infinity Fabric); over PCIe there is no such link.
  const LINK_NAMES = {nvswitch: 'NVLink', nvlink: 'NVLink', 'infinity-fabric': 'Infinity Fabric'};
  function instanceInfo(inst) {
    const name = LINK_NAMES[inst.intra_node_fabric];
    return Object.assign({}, FIELD_INFO, {
      nvlink_gbytes_per_s: [name || 'Direct GPU-to-GPU link', 'GB/s per GPU, both directions'],
      nvlink_domain_gpus: [name ? name + ' domain' : 'GPU-to-GPU domain', 'GPUs one GPU reaches ' + (name ? 'over ' + name : 'directly')]});
  }
  function gpuInfo(gpu) {
    const name = gpu.vendor === 'amd' ? 'Infinity Fabric' : 'NVLink';
    return Object.assign({}, GPU_INFO, {nvlink_gbytes_per_s: [name, 'GB/s'], nvlink_generation: [name + ' generation'],
                                        nvlink_domain_max_gpus: ['Largest ' + name + ' domain', 'GPUs']});
  }
  function factValue(obj, key) {
    const v = obj[key];
    if (MONEY.has(key) && typeof v === 'number') return usd(v);
    // No direct link is a fact of a PCIe or single-GPU machine, not an unknown; nor is an empty region list.
    return absent(obj, key) || fmt(v);
  }

  function factList(obj, info) {
    const dl = h('dl', {class: 'facts'});
    for (const [key, [label, unit]] of Object.entries(info)) {
      if (!(key in obj)) continue;
      dl.append(h('dt', {}, label, unit ? h('small', {}, ' (' + unit + ')') : null), h('dd', {}, factValue(obj, key)));
    }
    for (const key of Object.keys(obj)) {  // fields the page does not know yet are shown too
      if (key in info || key === 'sources' || key === 'id') continue;
      dl.append(h('dt', {}, key), h('dd', {}, fmt(obj[key])));
    }
    return dl;
  }
  function sourcesTable(sources, caption) {
    const entries = Object.entries(sources || {});
    return h('table', {class: 'sources'}, h('caption', {class: 'sr-only'}, caption),
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Facts'), h('th', {scope: 'col'}, 'Source'), h('th', {scope: 'col'}, 'As of'), h('th', {scope: 'col'}, 'Note'))),
      h('tbody', {}, entries.map(([group, s]) => h('tr', {},
        h('th', {scope: 'row'}, group),
        h('td', {}, s.url ? h('a', {href: s.url, rel: 'noopener noreferrer', target: '_blank'}, s.url) : fmt(null)),
        h('td', {'data-label': 'As of'}, fmt(s.as_of)), h('td', {'data-label': s.note ? 'Note' : null}, s.note || '')))));
  }

  const detail = document.getElementById('view-instance');
  LW.register('instance', {
    async render(params, id) {
      detail.replaceChildren(h('p', {class: 'note'}, 'Loading ' + id + '…'));
      let inst, gpus;
      try {
        [inst, gpus] = await Promise.all([api('/v1/instances/' + encodeURIComponent(id)), LW.gpus()]);
      } catch (err) {  // no such instance: say so where the loading line was, with the way back
        detail.replaceChildren(h('p', {}, h('a', {href: '#/instances'}, '← All instances')),
          h('p', {class: 'note'}, 'No instance ' + id + ' in the catalog.'));
        throw err;
      }
      const gpu = gpus.find(g => g.id === inst.gpu_model);
      // The plan view puts this instance into the workload the user has there (or a small example
      // job on a fresh form), rather than replacing it.
      const planHash = LW.hashFor('plan', {instance: inst.id});
      detail.replaceChildren(
        h('p', {}, h('a', {href: '#/instances'}, '← All instances')),
        h('h1', {id: 'h-instance'}, inst.id),
        h('p', {class: 'lead'}, inst.gpu_count + ' × ' + inst.gpu_model + ', ' + (inst.intra_node_fabric || 'unknown fabric') +
          (inst.nvlink_gbytes_per_s ? ' at ' + num(inst.nvlink_gbytes_per_s) + ' GB/s per GPU' : '') + ', ' +
          (inst.network_type || 'unknown network') + (inst.network_gbits_per_s ? ' at ' + num(inst.network_gbits_per_s) + ' Gbit/s' : '') + '. ',
          h('a', {href: planHash}, 'Plan a job on it'), ' · ',
          h('a', {href: LW.hashFor('fleet', {instance: inst.id})}, 'Measured links (fleet)'), ' · ',
          h('a', {href: '/v1/instances/' + encodeURIComponent(inst.id)}, 'JSON')),
        h('div', {class: 'cards'},
          h('div', {class: 'panel'}, h('h2', {}, 'Instance'), factList(inst, instanceInfo(inst))),
          gpu ? h('div', {class: 'panel'}, h('h2', {}, 'GPU: ' + gpu.id), factList(gpu, gpuInfo(gpu))) : null),
        h('h2', {}, 'Sources of the instance facts'),
        h('div', {class: 'table-wrap'}, sourcesTable(inst.sources, 'Sources of ' + inst.id)),
        ...(gpu ? [h('h2', {}, 'Sources of the GPU facts'), h('div', {class: 'table-wrap'}, sourcesTable(gpu.sources, 'Sources of ' + gpu.id))] : []));
    },
  });
})();

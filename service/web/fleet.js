// Fleet: per instance type, the stored probe reports (GET /v1/probe-reports?instance=) and each
// catalog claim's verdict and distribution over them (GET /v1/instances/{id}/validation), with the
// measured share of the claim as a chart.
'use strict';

(() => {
  const {h, fmt, num, api} = LW;
  const section = document.getElementById('view-fleet');
  let built = false;
  let picker, content, known;
  let chart = null;

  function build(instances, reported) {
    known = new Set(instances.map(i => i.id));
    const input = h('input', {id: 'fleet-instance', name: 'instance', type: 'text', list: 'fleet-instance-list', autocomplete: 'off',
                              placeholder: 'e.g. aws:p5.48xlarge', required: true});
    // Synthetic test reports are left out of the verdicts unless asked for (the API's include_synthetic).
    const synthetic = h('input', {type: 'checkbox', name: 'synthetic', id: 'fleet-synthetic'});
    const go = () => {
      const id = input.value.trim();
      if (id) location.hash = LW.hashFor('fleet', synthetic.checked ? {instance: id, synthetic: '1'} : {instance: id});
    };
    synthetic.addEventListener('change', go);
    picker = h('form', {class: 'panel copyrow picker-form', role: 'search', 'aria-label': 'Instance type',
                        onsubmit: e => { e.preventDefault(); go(); }},
      h('label', {class: 'field', for: 'fleet-instance', style: null}, 'Instance type', input),
      h('button', {type: 'submit', class: 'primary'}, 'Show'),
      h('label', {class: 'check', for: 'fleet-synthetic'}, synthetic, 'Count synthetic test reports'),
      h('datalist', {id: 'fleet-instance-list'}, instances.map(i => h('option', {value: i.id}))));
    content = h('div', {id: 'fleet-content', 'aria-live': 'polite'});
    section.replaceChildren(
      h('h1', {id: 'h-fleet'}, 'Fleet: measured links'),
      h('p', {class: 'lead'}, 'Probe reports uploaded with ', h('code', {}, 'linkwise report upload'), ' (or POST /v1/probe-reports with an API key) ',
        'are checked against the catalog\'s claims for their instance type. Each claim\'s verdict is its median report\'s share of the expected figure against the minimum efficiency.'),
      picker, reportedList(reported), content);
    built = true;
  }

  function reportedList(reported) {
    const counts = {};
    for (const r of reported) counts[r.instance] = (counts[r.instance] || 0) + 1;
    const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
    if (!entries.length)
      return h('p', {class: 'note', id: 'fleet-reported'}, 'No probe report is stored yet. Once someone who rented an instance ',
        'runs ', h('code', {}, 'linkwise probe'), ' on it and uploads the report, this page shows, for that instance type, how its ',
        'NVLink, network, GPU memory and PCIe measured against what the provider claims: the evidence to pick between ',
        'two providers of the same GPU, or to ask one for a refund.');
    // Stored reports, synthetic ones included (the view below says which the verdicts count); a
    // link keeps the "count synthetic" choice.
    const keep = picker && picker.elements.synthetic.checked ? {synthetic: '1'} : {};
    return h('p', {id: 'fleet-reported'}, 'Instance types with stored reports: ',
      entries.map(([id, n], i) => [i ? ', ' : '', h('a', {href: LW.hashFor('fleet', Object.assign({instance: id}, keep))}, id), ` (${n} stored)`]));
  }

  // What the verdicts rest on: synthetic test reports are stored and listed, but the verdicts leave
  // them out (the API's rule), so "counted" and "stored" differ.
  function countsText(v) {
    const counted = v.reports || 0;
    const synthetic = v.synthetic_reports && !v.synthetic_included ? v.synthetic_reports : 0;
    const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
    if (v.synthetic_included && v.synthetic_reports)
      return `${plural(counted, 'report')} counted in the verdicts, ${v.synthetic_reports === 1 ? 'one of them a synthetic test report' : v.synthetic_reports + ' of them synthetic test reports'} (counted as asked).`;
    if (!synthetic) return plural(counted, 'report') + ' counted in the verdicts.';
    return `${plural(counted, 'report')} counted in the verdicts; ${plural(synthetic, 'synthetic test report')} stored and not counted ` +
           `(${counted + synthetic} stored).`;
  }

  // What each column of a claims table means (its header's tooltip).
  const EXPECTED = 'what a probe should measure if the claim holds, in the probe\'s own terms: for NVLink, the per-direction ' +
                   'bus bandwidth (NCCL all-reduce busbw) the claimed both-directions figure implies, half of it; for the network ' +
                   'and PCIe, the one-direction rate the claim implies; for HBM, the claimed peak. – where no counted report ' +
                   'measures the claim, so there is nothing to compare.';
  const HEADS = {
    Claim: 'the catalog\'s claim, and how the catalog counts it', Claimed: 'the figure the catalog publishes, in its own unit',
    Expected: EXPECTED, Measured: 'what the report\'s probe measured', Share: 'measured ÷ expected',
    Median: 'the median of the counted reports\' measurements', Min: 'the lowest counted report', Max: 'the highest counted report',
    'Median share': 'the median report\'s measurement ÷ expected', Required: 'the least share of the expected figure a healthy system reaches',
    Verdict: 'meets: the share reaches the required one; below: it does not; cannot-check: no counted report measures the claim',
  };
  const headCell = (t, numeric) => h('th', {scope: 'col', class: numeric ? 'num' : null, title: HEADS[t] || null}, t);
  const expectedTitle = c => c.expected === null || c.expected === undefined ? 'no counted report measures this claim'
    : `${num(c.claimed)} ${c.claimed_unit} claimed (${c.claim_convention}): a probe should measure ${num(c.expected)} ${c.unit}`;

  // Why a claim cannot be checked: the reports' own reason (the probe they lack), else a hint.
  function cannotCheckReason(c, validation, reports, includeSynthetic) {
    if (!c.reports) return validation.synthetic_reports && !validation.synthetic_included
      ? 'no counted report: synthetic test reports are not counted unless ticked above' : 'no report for this instance type';
    const reasons = {};
    for (const r of reports) {
      if (r.synthetic && !includeSynthetic) continue;
      for (const x of (r.validation && r.validation.verdicts) || [])
        if (x.claim === c.claim && x.verdict === 'cannot-check' && x.reason) reasons[x.reason] = (reasons[x.reason] || 0) + 1;
    }
    const common = Object.entries(reasons).sort((a, b) => b[1] - a[1]);
    return common.length ? common[0][0] : 'needs a report with the probe that measures this claim';
  }
  // `code` in a reason (a command to run) reads as code.
  const withCode = text => text.split('`').map((part, i) => i % 2 ? h('code', {}, part) : part);

  function share(v, expected) { return v === null || expected === null || !expected ? null : v / expected; }

  // One stored report, readable: where it came from, each claim's verdict on it, and every result
  // (medians as the probes measured them; `linkwise report show` prints the same report as tables).
  async function showReport(reportId) {
    const box = document.getElementById('fleet-report');
    let stored;
    try {
      stored = await api('/v1/probe-reports/' + encodeURIComponent(reportId));
    } catch (err) {
      box.replaceChildren(h('p', {class: 'note'}, 'No report #' + reportId + ' (see the message above).'));
      throw err;
    }
    const env = (stored.report && stored.report.environment) || {};
    const gpus = env.gpus || [];
    const v = stored.validation || {verdicts: []};
    const facts = [['instance', stored.instance], ['received (UTC)', stored.received_at], ['uploaded by', stored.uploaded_by],
                   ['instance detected by', v.instance && v.instance.detected_by], ['GPUs', gpus.length ? `${gpus.length} × ${gpus[0].name}` : null],
                   ['nodes, ranks', env.nodes !== undefined ? `${env.nodes}, ${env.ranks}` : null], ['created', env.created_at],
                   ['host', env.hostname], ['driver / CUDA / NCCL', [env.driver_version, env.cuda_runtime_version, env.nccl_version].map(x => x || '–').join(' / ')]];
    const verdicts = h('table', {id: 'report-verdicts'}, h('caption', {class: 'sr-only'}, 'Claims checked against report #' + reportId),
      h('thead', {}, h('tr', {}, ['Claim', 'Measured', 'Expected', 'Share', 'Required', 'Verdict', 'What was measured']
        .map((t, i) => headCell(t, i >= 1 && i <= 4)))),
      h('tbody', {}, (v.verdicts || []).map(x => h('tr', {},
        h('th', {scope: 'row'}, x.claim),
        h('td', {class: 'num'}, fmt(x.measured), x.measured === null || x.measured === undefined ? null : [' ', h('small', {}, x.unit)]),
        h('td', {class: 'num', title: expectedTitle(x)}, fmt(x.expected), x.expected === null || x.expected === undefined ? null : [' ', h('small', {}, x.unit)]),
        h('td', {class: 'num'}, x.efficiency === null || x.efficiency === undefined ? fmt(null) : num(x.efficiency * 100, 1) + '%'),
        h('td', {class: 'num'}, num(x.min_efficiency * 100, 0) + '%'),
        h('td', {}, h('span', {class: 'badge ' + x.verdict}, x.verdict)),
        h('td', {class: 'note'}, withCode(x.measurement || x.reason || ''))))));
    const rows = [];
    for (const probe of (stored.report && stored.report.probes) || []) {
      if (!probe.results || !probe.results.length) {
        rows.push(h('tr', {}, h('td', {}, probe.name), h('td', {colspan: 5, class: 'note'}, probe.status + (probe.reason ? ': ' + probe.reason : ''))));
        continue;
      }
      for (const r of probe.results)
        rows.push(h('tr', {}, h('td', {}, probe.name), h('td', {}, r.metric),
          h('td', {class: 'note'}, Object.entries(r.labels || {}).map(([k, x]) => `${k} ${x}`).join(', ')),
          h('td', {class: 'num'}, r.bytes ? num(r.bytes / 2 ** 20, 0) + ' MiB' : fmt(null)),
          h('td', {class: 'num'}, fmt(r.stats && r.stats.median), ' ', h('small', {}, r.unit)),
          h('td', {class: 'num'}, r.stats ? num(r.stats.count, 0) : fmt(null))));
    }
    box.replaceChildren(h('section', {class: 'panel', 'aria-labelledby': 'h-report'},
      h('h2', {id: 'h-report'}, `Report #${reportId}`, stored.synthetic ? [' ', h('span', {class: 'badge warn'}, 'synthetic')] : null),
      h('dl', {class: 'facts'}, facts.filter(([, x]) => x).map(([k, x]) => [h('dt', {}, k), h('dd', {}, String(x))])),
      h('h3', {}, 'Claims on this report'), h('div', {class: 'table-wrap'}, verdicts),
      h('h3', {}, 'Results (medians)'),
      h('div', {class: 'table-wrap'}, h('table', {id: 'report-results'}, h('caption', {class: 'sr-only'}, 'Results of report #' + reportId),
        h('thead', {}, h('tr', {}, ['Probe', 'Metric', 'Labels', 'Size', 'Median', 'Samples'].map((t, i) => h('th', {scope: 'col', class: i >= 3 ? 'num' : null}, t)))),
        h('tbody', {}, rows))),
      h('p', {class: 'note'}, 'The stored report as JSON: ', h('a', {href: '/v1/probe-reports/' + encodeURIComponent(reportId)}, '/v1/probe-reports/' + reportId), '.')));
  }

  async function show(id, includeSynthetic, reportId) {
    if (chart) { chart.destroy(); chart = null; }
    content.replaceChildren(h('p', {class: 'note'}, 'Loading ' + id + '…'));
    let validation, reports;
    try {
      [validation, reports] = await Promise.all([
        api('/v1/instances/' + encodeURIComponent(id) + '/validation' + (includeSynthetic ? '?include_synthetic=true' : '')),
        api('/v1/probe-reports?' + new URLSearchParams({instance: id, limit: '100'}))]);
    } catch (err) {  // not loading any more: say what failed where the loading line was
      content.replaceChildren(h('p', {class: 'note'}, 'No validation for ' + id + ' (see the message above).'));
      throw err;
    }
    const claims = validation.claims || [];
    const head = h('div', {},
      h('h2', {}, h('a', {href: LW.hashFor('instances', null, id)}, id)),
      h('p', {id: 'fleet-counts'}, countsText(validation)));
    if (!validation.reports && !validation.synthetic_reports) {
      content.replaceChildren(head, h('p', {class: 'note'}, 'No probe report for this instance type yet: its links are the catalog\'s claims only.'));
      return;
    }
    const table = h('table', {id: 'claims-table'}, h('caption', {class: 'sr-only'}, 'Claims of ' + id + ' against the reports'),
      h('thead', {}, h('tr', {}, ['Claim', 'Claimed', 'Expected', 'Median', 'Min', 'Max', 'Median share', 'Required', 'Reports (meets / below / cannot check)', 'Verdict']
        .map((t, i) => headCell(t, i >= 1 && i <= 7)))),
      h('tbody', {}, claims.map(c => h('tr', {},
        h('th', {scope: 'row'}, c.claim, h('div', {class: 'note'}, c.claim_convention)),
        h('td', {class: 'num'}, fmt(c.claimed), ' ', h('small', {}, c.claimed_unit)),
        h('td', {class: 'num', title: expectedTitle(c)}, fmt(c.expected), c.expected === null ? null : [' ', h('small', {}, c.unit)]),
        ...[c.median, c.min, c.max].map(v => h('td', {class: 'num'}, fmt(v), v === null || v === undefined ? null : [' ', h('small', {}, c.unit)])),
        h('td', {class: 'num'}, c.median_share_of_claim === null ? fmt(null) : num(c.median_share_of_claim * 100, 1) + '%'),
        h('td', {class: 'num'}, num(c.min_efficiency * 100, 0) + '%'),
        h('td', {}, `${c.count} of ${c.reports}: ${c.verdicts.meets} / ${c.verdicts.below} / ${c.verdicts['cannot-check']}`),
        h('td', {}, h('span', {class: 'badge ' + c.verdict}, c.verdict),
          c.verdict === 'cannot-check' ? h('div', {class: 'note reason'}, withCode(cannotCheckReason(c, validation, reports.items || [], includeSynthetic))) : null)))));
    const reportRows = (reports.items || []).map(r => {
      const v = r.validation || {verdicts: []};
      const counts = {meets: 0, below: 0, 'cannot-check': 0};
      for (const x of v.verdicts) counts[x.verdict] = (counts[x.verdict] || 0) + 1;
      return h('tr', {},
        h('td', {}, h('a', {href: LW.hashFor('fleet', Object.assign({instance: id, report: String(r.id)}, includeSynthetic ? {synthetic: '1'} : {})),
                            title: 'the report\'s measurements and verdicts'}, '#' + r.id),
          r.synthetic ? [' ', h('span', {class: 'badge warn', title: 'a synthetic test report: listed, not counted in the verdicts'}, 'synthetic')] : null),
        h('td', {}, r.received_at), h('td', {}, r.uploaded_by),
        h('td', {}, v.instance && v.instance.detected_by ? v.instance.detected_by : ''),
        h('td', {}, h('span', {class: 'badge meets'}, counts.meets + ' meet'), ' ', h('span', {class: 'badge below'}, counts.below + ' below'), ' ',
          h('span', {class: 'badge cannot-check'}, counts['cannot-check'] + ' cannot check')));
    });
    const measurable = claims.filter(c => c.count > 0 && c.expected);
    content.replaceChildren(head,
      // The DOM's replaceChildren writes a null out as text: only the nodes there are.
      ...(reportId ? [h('div', {id: 'fleet-report'}, h('p', {class: 'note'}, 'Loading report #' + reportId + '…'))] : []),
      h('div', {class: 'table-wrap'}, table),
      h('h2', {}, 'Measured share of each claim'),
      h('p', {class: 'note'}, 'Bars span the lowest to the highest report (measured ÷ expected); the dot is the median; the dash is the share the verdict requires.'),
      measurable.length
        ? h('div', {class: 'panel chart-box'}, h('canvas', {id: 'chart-fleet', role: 'img', 'aria-label': 'Measured share of each claim for ' + id}))
        : h('p', {class: 'note', id: 'fleet-no-chart'}, 'No counted report measures a claim with an expected figure: nothing to draw' + (includeSynthetic ? '.' : ' (synthetic test reports are not counted unless ticked above).')),
      h('h2', {}, 'Reports'),
      h('div', {class: 'table-wrap'}, h('table', {id: 'reports-table'}, h('caption', {class: 'sr-only'}, 'Probe reports of ' + id),
        h('thead', {}, h('tr', {}, ['Report', 'Received (UTC)', 'Uploaded by', 'Instance detected by', 'Claims'].map(t => h('th', {scope: 'col'}, t)))),
        h('tbody', {}, reportRows))));
    if (reportId) await showReport(reportId);
    if (!measurable.length) return;
    const Chart = await LW.chartjs();
    chart = new Chart(document.getElementById('chart-fleet'), {
      type: 'bar',
      data: {labels: measurable.map(c => c.claim), datasets: [
        {type: 'line', showLine: false, label: 'Median', data: measurable.map(c => share(c.median, c.expected) * 100),
         backgroundColor: '#0f172a', borderColor: '#0f172a', pointRadius: 6, pointHoverRadius: 8, order: 0},
        {type: 'line', showLine: false, label: 'Required', data: measurable.map(c => c.min_efficiency * 100), pointStyle: 'line',
         pointRadius: 22, pointHoverRadius: 22, borderColor: '#dc2626', backgroundColor: '#dc2626', pointBorderWidth: 3, order: 1},
        {label: 'Lowest to highest report', data: measurable.map(c => [share(c.min, c.expected) * 100, share(c.max, c.expected) * 100]),
         backgroundColor: measurable.map(c => c.verdict === 'below' ? 'rgba(220,38,38,0.45)' : 'rgba(22,163,74,0.45)'),
         borderColor: measurable.map(c => c.verdict === 'below' ? '#a40e26' : '#116329'), borderWidth: 1, minBarLength: 4, order: 2},
      ]},
      options: {responsive: true, maintainAspectRatio: false, datasets: {bar: {maxBarThickness: 90}},
        scales: {y: {title: {display: true, text: '% of the expected figure'}, suggestedMin: 0, suggestedMax: 100}},
        plugins: {legend: {position: 'bottom'}, tooltip: {callbacks: {label: ctx => {
          const raw = ctx.raw;
          if (Array.isArray(raw)) return `${ctx.dataset.label}: ${num(raw[0], 1)}% – ${num(raw[1], 1)}%`;
          return `${ctx.dataset.label}: ${num(raw, 1)}%`;
        }}}}},
    });
  }

  LW.register('fleet', {
    async render(params) {
      const reportsNow = api('/v1/probe-reports?limit=1000');
      if (!built) {
        section.replaceChildren(h('h1', {id: 'h-fleet'}, 'Fleet: measured links'), h('p', {class: 'note'}, 'Loading…'));
        build(await LW.allInstances(), []);
      }
      const id = params.get('instance');
      picker.elements.instance.value = id || '';
      picker.elements.synthetic.checked = params.get('synthetic') === '1';
      // The stored reports' list, its links keeping the choice just restored.
      section.querySelector('#fleet-reported').replaceWith(reportedList((await reportsNow).items || []));
      if (id) await show(id, params.get('synthetic') === '1', params.get('report'));
      else content.replaceChildren(h('p', {class: 'note'}, 'Choose an instance type to see its reports.'));
    },
  });
})();

// Plan: a workload form that calls POST /v1/recommendations and shows the ranked plans, cost vs
// time of every returned plan with the Pareto front, the chosen plan's memory against capacity, its
// step time and its bottleneck; a link that reopens the same workload; the workload JSON to copy.
'use strict';

(() => {
  const {h, fmt, num, usd, usdShort, duration, durationColumn, api} = LW;
  const EXAMPLE = {  // data/examples/recommend-llama3.1-70b.json
    model: {preset: 'llama3.1-70b'},
    job: {kind: 'pretrain', seq_len: 8192, global_batch: 512, tokens: 1e12, precision: 'bf16'},
    constraints: {max_nodes: 64, deadline_hours: 720, objective: 'cost_within_deadline'},
  };
  // A fresh form: the example's job, none of its constraints (no deadline, node cap or deadline
  // objective carried into every job the user types); the Example button loads them all.
  const FRESH = {model: EXAMPLE.model, job: EXAMPLE.job, constraints: {objective: 'cost'}};
  // The job "Plan a job on it" runs on a fresh form: small enough to fit one node of most instances.
  // "Plan a job on it": an example job suited to the machine. Llama 3.1 8B full fine-tuning where one
  // node holds it with room (320 GB of GPU memory and more), QLoRA of it (4-bit base) on smaller
  // nodes; fp16 on GPUs without bf16 tensor cores (before Ampere), bf16 otherwise.
  const FULL_FINETUNE = {kind: 'finetune', seq_len: 4096, global_batch: 64, tokens: 1e9};
  const QLORA = {kind: 'lora', lora_base: '4bit', seq_len: 2048, global_batch: 16, tokens: 1e8};
  async function instanceExample(instanceId) {
    const [instances, gpuList] = await Promise.all([LW.allInstances(), LW.gpus()]);
    const instance = instances.find(i => i.id === instanceId);
    const gpu = instance && gpuList.find(g => g.id === instance.gpu_model);
    const nodeGb = instance ? instance.gpu_count * instance.gpu_memory_gb : 0;
    const full = nodeGb >= 320;
    const precision = gpu && ['volta', 'turing'].includes(gpu.architecture) ? 'fp16' : 'bf16';
    return {workload: {model: {preset: 'llama3.1-8b'}, job: Object.assign({}, full ? FULL_FINETUNE : QLORA, {precision}),
                       hardware: {instance: instanceId, nodes: 1}},
            words: 'Llama 3.1 8B ' + (full ? 'full fine-tune' : 'QLoRA (4-bit base)') + ', ' + precision};
  }
  const MEMORY_PARTS = [['weights', 'Weights', '#1d4ed8'], ['gradients', 'Gradients', '#7c3aed'], ['optimizer', 'Optimizer', '#c026d3'],
                        ['activations', 'Activations', '#ea580c'], ['kv_cache', 'KV cache', '#0d9488'], ['overhead', 'Overhead', '#64748b']];
  const TIME_PARTS = [['compute', 'Compute', '#1d4ed8'], ['tp_comm', 'TP comm', '#ea580c'], ['cp_comm', 'CP comm', '#f59e0b'],
                      ['pp_comm', 'PP comm', '#c026d3'], ['pp_bubble', 'PP bubble', '#a855f7'], ['dp_comm', 'DP comm', '#0d9488'],
                      ['ep_comm', 'EP all-to-all', '#0891b2'], ['dequant', 'Dequantisation (within compute)', '#92400e'],
                      ['exposed_comm', 'Exposed comm', '#dc2626'], ['offload', 'CPU offload (PCIe + host step)', '#64748b']];

  // Each communication's part that compute does not hide (time_s.*_exposed; they sum to exposed_comm).
  const EXPOSED_PART = {tp_comm: 'tp_exposed', cp_comm: 'cp_exposed', pp_comm: 'pp_exposed', dp_comm: 'dp_exposed', ep_comm: 'ep_exposed'};

  // The words a plan is read in, shown as column tooltips and in "How to read a plan".
  const GLOSSARY = {
    layout: 'TP: tensor parallel (each layer split over this many GPUs). PP: pipeline parallel (layers split into stages). ' +
            'DP: data parallel (model copies); for serving, replicas (engines each serving their own requests). ' +
            'CP: context parallel (the sequence split). VP: virtual pipeline stages per GPU. ' +
            'EP: expert parallel (experts spread over GPUs). ETP: expert tensor parallel (each expert split over this many GPUs). ' +
            'mb: micro-batch (sequences per pass). ZeRO: how far optimizer states, ' +
            'gradients (2) and weights (3) are sharded over the data-parallel GPUs. ' +
            'offload: ZeRO-Offload, optimizer states (and with "params" the weights) kept in CPU memory, the optimizer step run there.',
    step: 'time of one optimizer step (one global batch)',
    decode: 'time per output token at the plan\'s concurrency: the decode steps, with the other requests\' prefill chunks that share them',
    mfu: 'model FLOPs utilisation: the model\'s useful FLOPs per second as a share of the GPUs\' dense peak',
    ttft: 'TTFT idle: time to first token of one request on an idle engine. TTFT under load: the mean time to first token when ' +
          'the plan\'s concurrent requests start together, each waiting behind the prefills ahead of it (and, beyond the KV pool, for a slot)',
    margin: 'GPU memory left per GPU after the planner\'s predicted peak',
    tight: 'fits, but inside the memory model\'s measured error band: it may run out of memory',
    host: 'host not checked: the catalog gives no memory or vCPU figure for this host, so the offloaded states were not ' +
          'checked against it, and the plan ranks after those that were',
    rankedAfter: 'the planner ranks the plans it can fully check first, whatever they cost; after them come the tight ones ' +
                 'and those whose CPU-offload host it could not check, so a cheaper plan can sit below a dearer one',
    bottleneck: 'the largest term of the step: compute, or the link (NVLink, network, GPU memory (HBM or GDDR), PCIe) that holds it back',
    interval: 'the range in which 8 of 10 published runs like this one landed, measured against the prediction',
    extrapolated: 'the planner extrapolates here (a GPU generation, engine or efficiency with few or no published runs ' +
                  'like it): its range is widened, and the plan\'s warnings say why. Estimates of well-measured hardware ' +
                  'carry no such badge',
    deadlineRisk: 'meets the deadline at the prediction, but not at the slow end of its p10–p90 range',
  };
  // GPU memory is binary: a card sold as "80 GB" holds 80 GiB (core/include/linkwise/units.hpp). The
  // planner reports GB (10^9 bytes); the page shows GiB, so capacity reads against the card's size.
  const GIB_PER_GB = 1e9 / 2 ** 30;
  const gib = gb => gb === null || gb === undefined ? null : gb * GIB_PER_GB;
  // "concurrent": "max" stops at the KV pool or the engine's cap on running sequences, whichever is
  // lower: the plan's max_concurrent_limit names which.
  const MAX_CONCURRENT = {
    kv_pool: ': as many as its KV pool holds',
    engine_batch_limit: ': the engine\'s sequence cap, with KV memory to spare',
  };
  const OFFLOAD_WORDS = {optimizer: 'optimizer', optimizer_and_params: 'optimizer + params'};
  const section = document.getElementById('view-plan');
  let built = false;
  let form, results, jsonArea, reopenLink, runButton;
  let extras = {};          // parts of a loaded workload the form has no field for (layout, custom hardware ...)
  let explicitJob = new Set();  // the job fields a loaded workload stated, defaults included: they stay stated
  let tokensChosen = false;     // the Tokens field holds what the user typed or loaded, not a kind's starting value
  // Tokens a kind of job starts with on the form: a pre-training corpus, a fine-tuning set; a serving
  // job none (its answer is per token: $/M tokens), unless the user states how many to generate.
  const KIND_TOKENS = {pretrain: '1e12', finetune: '1e9', lora: '1e9', inference: ''};
  let lastAnswer = null, selected = 0, charts = {};
  let lastOffload = null;   // the answered workload's job.offload: a plan's layout does not carry it
  let answerDeadline = null;  // the answered workload's deadline (hours): a plan carries whether it meets it, not the figure
  let timeColumns = {};     // the plan table's time columns ({unit, of}): the detail states its times in their units
  let lastRunKey = null;
  let lastRunState = null;  // the URL state of the last run: a selection adds `sel` to it
  let pendingSelect = 0;    // the plan to select when the answer arrives (a reopened URL's `sel`)

  const field = (name, label, attrs, hint) => {
    const id = 'p-' + name;
    const control = attrs.options
      ? h('select', {id, name}, attrs.options.map(o => Array.isArray(o) ? h('option', {value: o[0]}, o[1]) : h('option', {value: o}, o)))
      : h('input', Object.assign({id, name, type: 'number', step: 'any', inputmode: 'decimal', autocomplete: 'off'}, attrs));
    return h('label', {class: 'field', for: id}, h('span', {}, label, hint ? h('small', {}, ' (' + hint + ')') : null), control);
  };
  const check = (name, label, checked) => h('label', {class: 'check'}, h('input', {type: 'checkbox', name, checked}), label);

  // `presets`: the planner's model presets, by name, from GET /v1/models (the page keeps no list).
  function build(instances, presets) {
    const providers = [...new Set(instances.map(i => i.provider))].sort();
    form = h('form', {class: 'panel', 'aria-label': 'Workload', novalidate: true},
      h('fieldset', {}, h('legend', {}, 'Model'),
        h('div', {class: 'radios', role: 'radiogroup', 'aria-label': 'How the model is given'},
          ['preset', 'params', 'shape'].map(m => h('label', {class: 'check'}, h('input', {type: 'radio', name: 'model_mode', value: m}),
            {preset: 'Preset', params: 'Size', shape: 'Shape'}[m]))),
        h('div', {class: 'grid2', 'data-mode': 'preset'}, field('preset', 'Preset', {options: presets})),
        h('div', {class: 'grid2', 'data-mode': 'params'}, field('params_b', 'Parameters', {min: 0.1}, 'billions'), field('m_vocab', 'Vocabulary', {min: 1, step: 1})),
        h('div', {class: 'grid2', 'data-mode': 'shape'},
          field('layers', 'Layers', {min: 1, step: 1}), field('hidden', 'Hidden', {min: 1, step: 1}), field('heads', 'Heads', {min: 1, step: 1}),
          field('kv_heads', 'KV heads', {min: 1, step: 1}), field('ffn_hidden', 'FFN hidden', {min: 1, step: 1}), field('s_vocab', 'Vocabulary', {min: 1, step: 1}),
          check('gated_mlp', 'Gated MLP (SwiGLU)', true), check('tied_embeddings', 'Tied embeddings', false), check('dropout', 'Dropout', false))),
      h('fieldset', {}, h('legend', {}, 'Job'),
        h('div', {class: 'grid2'},
          field('kind', 'Kind', {options: [['pretrain', 'pre-train'], ['finetune', 'full fine-tune'], ['lora', 'LoRA'], ['inference', 'inference']]}),
          field('precision', 'Precision', {options: ['bf16', 'fp16', 'fp8', 'fp4']}),
          field('tokens', 'Tokens', {min: 1}, 'to train on, e.g. 1e12'),
          h('div', {'data-kind': 'train', class: 'grid2', style: null}, field('seq_len', 'Sequence', {min: 1, step: 1}, 'tokens'), field('global_batch', 'Global batch', {min: 1, step: 1}, 'sequences')),
          h('div', {'data-kind': 'lora', class: 'grid2'}, field('lora_rank', 'LoRA rank', {min: 1, step: 1}), field('lora_base', 'LoRA base', {options: [['bf16', 'bf16'], ['4bit', '4-bit NF4 (QLoRA)'], ['fp8', 'fp8 (precision fp8)']]}),
            field('lora_targets', 'Adapters on', {options: [['all', 'every linear layer'], ['attention', 'attention (Q, K, V, O)']]})),
          h('div', {'data-kind': 'inference', class: 'grid2'}, field('prompt_len', 'Prompt', {min: 1, step: 1}, 'tokens'), field('output_len', 'Output', {min: 1, step: 1}, 'tokens'),
            field('concurrent', 'Concurrent', {min: 1, step: 1}, 'sequences'), field('latency_target_ms', 'Latency target', {min: 0}, 'ms/token'),
            field('engine', 'Engine', {options: [['auto', 'auto (TensorRT-LLM; vLLM on AMD)'], ['vllm', 'vLLM'], ['sglang', 'SGLang'], ['tensorrt-llm', 'TensorRT-LLM']]}),
            check('concurrent_max', 'Max throughput (as many sequences as the KV cache and the engine\'s sequence cap allow)', false)),
          h('div', {'data-kind': 'train', class: 'grid2'},
            field('framework', 'Framework', {options: [['auto', 'auto (Megatron-Core; FSDP at ZeRO-3)'], ['megatron-core', 'Megatron-Core'], ['nemo', 'NeMo'],
              ['torchtitan', 'torchtitan'], ['deepspeed', 'DeepSpeed'], ['fsdp', 'PyTorch FSDP'], ['hf-accelerate', 'HF Accelerate'], ['hai-llm', 'HAI-LLM (DeepSeek)']]}),
            field('optimizer', 'Optimizer', {options: [['adamw', 'AdamW'], ['adam8bit', '8-bit Adam'], ['adafactor', 'Adafactor'], ['sgd', 'SGD']]}),
            field('loss', 'Loss', {options: [['eager', 'eager (PyTorch, fp32 logits)'], ['fused', 'fused kernel (flash-attn, TE)']]})),
          h('div', {'data-kind': 'full', class: 'grid2'}, field('offload', 'CPU offload', {options: [['none', 'none'], ['optimizer', 'optimizer states (ZeRO 1-3)'],
            ['optimizer_and_params', 'optimizer states + params (ZeRO-3)']]}),
            field('grad_reduce_dtype', 'Gradients', {options: [['fp32', 'fp32 (Megatron-Core default)'], ['bf16', 'bf16 (NVIDIA perf recipes)']]})),
          h('div', {'data-kind': 'train'}, check('flash_attention', 'FlashAttention', true)))),
      h('fieldset', {}, h('legend', {}, 'Hardware (optional)'),
        h('div', {class: 'grid2'},
          h('label', {class: 'field', for: 'p-instance'}, h('span', {}, 'Instance', h('small', {}, ' (empty: search the catalog)')),
            h('input', {id: 'p-instance', name: 'instance', type: 'text', list: 'p-instance-list', autocomplete: 'off', placeholder: 'aws:p5.48xlarge'})),
          field('nodes', 'Nodes', {min: 1, step: 1}),
          h('datalist', {id: 'p-instance-list'}, instances.map(i => h('option', {value: i.id}, i.gpu_count + ' × ' + i.gpu_model))))),
      h('fieldset', {}, h('legend', {}, 'Constraints'),
        h('fieldset', {class: 'providers'}, h('legend', {class: 'note'}, 'Providers (none ticked: all)'),
          h('div', {class: 'grid3'}, providers.map(p => h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'providers', value: p}), p)))),
        h('div', {class: 'grid2'},
          h('label', {class: 'field', for: 'p-gpu_models'}, h('span', {}, 'GPUs', h('small', {}, ' (comma-separated)')),
            h('input', {id: 'p-gpu_models', name: 'gpu_models', type: 'text', list: 'lw-gpu-list', autocomplete: 'off', placeholder: 'H100, A100'})),
          field('max_gpus', 'Max GPUs', {min: 1, step: 1}), field('max_nodes', 'Max nodes', {min: 1, step: 1}), field('min_nodes', 'Min nodes', {min: 1, step: 1}),
          field('budget_usd', 'Budget', {min: 0}, '$'), field('deadline_hours', 'Deadline', {min: 0}, 'hours'),
          field('objective', 'Objective', {options: [['cost', 'lowest cost'], ['time', 'shortest time'], ['cost_within_deadline', 'lowest cost within the deadline']]}),
          check('spot', 'Spot prices', false), check('tp_across_nodes', 'TP across nodes', false))),
      h('div', {class: 'copyrow'},
        field('top', 'Plans to show', {min: 1, max: 100, step: 1}),
        field('per', 'Show', {options: [['instance', 'best per instance type'], ['gpu', 'best per GPU model'], ['none', 'every layout']]}),
        runButton = h('button', {type: 'submit', class: 'primary'}, 'Recommend'),
        h('button', {type: 'button', title: 'Llama 3.1 70B pre-training on 10¹² tokens, cheapest within 720 hours', onclick: () => { loadWorkload(EXAMPLE, 50); run(); }}, 'Example')));
    form.addEventListener('submit', e => { e.preventDefault(); run(); });
    form.addEventListener('input', () => { updateVisibility(); showJson(); });
    form.addEventListener('change', ev => {
      // The job fields a loaded workload carried without a control were for its kind of job: a
      // new kind starts without them (the planner refuses, e.g., torch_compile on inference).
      if (ev.target.name === 'kind') {
        extras.job = undefined;
        // Another kind of job is another scale of tokens: a pre-training corpus is not a fine-tune's.
        if (!tokensChosen) setValue('tokens', KIND_TOKENS[ev.target.value]);
      }
      if (ev.target.name === 'tokens') tokensChosen = ev.target.value.trim() !== '';
      updateVisibility(); showJson();
    });

    jsonArea = h('textarea', {id: 'p-json', class: 'mono', rows: 12, spellcheck: 'false', 'aria-labelledby': 'h-json', 'aria-describedby': 'p-json-help'});
    reopenLink = h('a', {href: '#/plan', id: 'p-reopen'}, 'Link to this workload');
    const copyJson = h('button', {type: 'button', onclick: e => LW.copyText(jsonArea.value, e.currentTarget)}, 'Copy JSON');
    const useJson = h('button', {type: 'button', onclick: () => {
      try { loadWorkload(JSON.parse(jsonArea.value), Number(form.elements.top.value) || 50); LW.clearError(); run(); }
      catch (e) { LW.showError(e, 'Workload JSON'); }
    }}, 'Run this JSON');
    results = h('div', {id: 'plan-results', 'aria-live': 'polite'});
    section.replaceChildren(
      h('h1', {id: 'h-plan'}, 'Plan a job'),
      h('p', {class: 'lead'}, 'Describe a training or inference job; the planner searches instances, node counts and parallel layouts ',
        'and ranks what fits by the objective. Hover a column header for its meaning, or open "How to read a plan".'),
      glossary(),
      h('div', {class: 'plan-layout'}, form,
        h('div', {},
          results,
          h('section', {class: 'panel', 'aria-labelledby': 'h-json', style: null},
            h('h2', {id: 'h-json'}, 'Workload JSON'),
            h('p', {class: 'note', id: 'p-json-help'}, 'The same JSON goes to ', h('code', {}, 'linkwise recommend workload.json'),
              ', to Python\'s ', h('code', {}, 'linkwise.recommend(json.loads(text))'), ' and to ', h('code', {}, 'POST /v1/recommendations'), '. Edit it here and run it, or paste one of data/examples/.'),
            jsonArea,
            h('div', {class: 'copyrow'}, copyJson, useJson, reopenLink)))));
    built = true;
  }

  function glossary() {
    const terms = [['TP, PP, DP, replicas, CP, VP, EP, ETP, mb, ZeRO, offload', GLOSSARY.layout], ['Step', GLOSSARY.step], ['Decode step', GLOSSARY.decode],
                   ['MFU', GLOSSARY.mfu], ['TTFT idle, TTFT under load', GLOSSARY.ttft], ['Memory margin', GLOSSARY.margin], ['tight', GLOSSARY.tight],
                   ['host not checked', GLOSSARY.host], ['Ranked after', GLOSSARY.rankedAfter],
                   ['Bottleneck', GLOSSARY.bottleneck], ['p10–p90', GLOSSARY.interval],
                   ['Example', 'loads data/examples/recommend-llama3.1-70b.json: pre-training Llama 3.1 70B on 10¹² tokens, ' +
                               'cheapest within a 720-hour deadline on up to 64 nodes']];
    return h('details', {id: 'plan-glossary', class: 'panel'}, h('summary', {}, 'How to read a plan'),
      h('dl', {}, terms.map(([term, text]) => [h('dt', {}, term), h('dd', {}, text)])),
      h('p', {class: 'note'}, 'The REST API behind this page is described at ', h('a', {href: '/docs'}, '/docs'), '.'));
  }

  function updateVisibility() {
    const mode = form.querySelector('input[name=model_mode]:checked')?.value || 'preset';
    for (const el of form.querySelectorAll('[data-mode]')) el.hidden = el.dataset.mode !== mode;
    const kind = form.elements.kind.value;
    for (const el of form.querySelectorAll('[data-kind]')) {
      const k = el.dataset.kind;
      // train: every training kind; full: the kinds that train every weight (pre-train, full fine-tune).
      el.hidden = !(k === 'train' ? kind !== 'inference' : k === 'full' ? kind === 'pretrain' || kind === 'finetune' : k === kind);
    }
    // "Max throughput" plans at what the KV pool holds: a typed count would be ignored, so the
    // field is off while the box is ticked (its value comes back when it is unticked).
    form.elements.concurrent.disabled = form.elements.concurrent_max.checked;
    const hint = form.querySelector('label[for=p-tokens] small');
    if (hint) hint.textContent = kind === 'inference' ? ' (to generate, optional: prices the whole job)' : ' (to train on, e.g. 1e12)';
  }

  const numberOf = name => { const v = form.elements[name].value.trim(); return v === '' ? undefined : Number(v); };
  const setValue = (name, v) => { if (form.elements[name]) form.elements[name].value = v === undefined || v === null ? '' : v; };
  function clean(obj) {
    for (const k of Object.keys(obj)) if (obj[k] === undefined || obj[k] === '' || (Array.isArray(obj[k]) && !obj[k].length)) delete obj[k];
    return obj;
  }

  function workloadFromForm() {
    const e = form.elements;
    const mode = form.querySelector('input[name=model_mode]:checked')?.value || 'preset';
    let model;
    if (mode === 'preset') model = {preset: e.preset.value};
    else if (mode === 'params') model = clean({params_b: numberOf('params_b'), vocab: numberOf('m_vocab')});
    else model = clean({layers: numberOf('layers'), hidden: numberOf('hidden'), heads: numberOf('heads'), kv_heads: numberOf('kv_heads'),
                        ffn_hidden: numberOf('ffn_hidden'), vocab: numberOf('s_vocab'), gated_mlp: e.gated_mlp.checked,
                        tied_embeddings: e.tied_embeddings.checked, dropout: e.dropout.checked});
    const kind = e.kind.value;
    const job = {kind};
    if (kind === 'inference') Object.assign(job, {prompt_len: numberOf('prompt_len'), output_len: numberOf('output_len'),
                                                  concurrent: e.concurrent_max.checked ? 'max' : numberOf('concurrent'),
                                                  latency_target_ms: numberOf('latency_target_ms'),
                                                  engine: e.engine.value === 'auto' ? undefined : e.engine.value});
    else {
      Object.assign(job, {seq_len: numberOf('seq_len'), global_batch: numberOf('global_batch')});
      // The defaults (auto, AdamW, eager loss, no offload, fp32 gradients, adapters on every layer) stay
      // out of the JSON unless the loaded workload stated them; a select showing nothing (a loaded
      // value it has no option for) leaves that value be.
      const choose = (name, byDefault) => {
        const v = e[name].value;
        if (v !== '' && (v !== byDefault || explicitJob.has(name))) job[name] = v;
      };
      if (kind === 'lora') {
        Object.assign(job, {lora_rank: numberOf('lora_rank'), lora_base: e.lora_base.value});
        choose('lora_targets', 'all');
      }
      choose('framework', 'auto');
      choose('optimizer', 'adamw');
      choose('loss', 'eager');
      if (kind !== 'lora') { choose('offload', 'none'); choose('grad_reduce_dtype', 'fp32'); }
    }
    job.tokens = numberOf('tokens');
    job.precision = e.precision.value;
    if (kind !== 'inference' && !e.flash_attention.checked) job.flash_attention = false;
    // Fields the form has no control for (a model's attention or moe object, job.framework, ...)
    // travel unchanged: the planner, not the page, decides what they mean.
    const w = {model: clean(Object.assign({}, extras.model || {}, model)), job: clean(Object.assign({}, extras.job || {}, job))};
    const instance = e.instance.value.trim();
    const nodes = numberOf('nodes');
    // Nodes travels whenever it is typed: without an instance the API says so, naming the field,
    // rather than the page dropping it (constraints' Min/Max nodes bound a search).
    if (instance || extras.hardware || nodes !== undefined) {
      w.hardware = clean(Object.assign({}, extras.hardware || {}, instance ? {instance} : {}, {nodes}));
    }
    if (extras.layout) w.layout = extras.layout;
    const providers = [...form.querySelectorAll('input[name=providers]:checked')].map(b => b.value);
    const gpuModels = e.gpu_models.value.split(',').map(s => s.trim()).filter(Boolean);
    const c = clean(Object.assign({}, extras.constraints || {}, {providers, gpu_models: gpuModels, max_gpus: numberOf('max_gpus'), max_nodes: numberOf('max_nodes'),
                     min_nodes: numberOf('min_nodes'), budget_usd: numberOf('budget_usd'), deadline_hours: numberOf('deadline_hours'),
                     objective: e.objective.value, spot: e.spot.checked || undefined, tp_across_nodes: e.tp_across_nodes.checked || undefined}));
    if (Object.keys(c).length) w.constraints = c;
    for (const k of ['name', 'description']) if (extras[k]) w[k] = extras[k];
    return w;
  }

  function loadWorkload(w, top) {
    if (!w || typeof w !== 'object' || !w.model || !w.job) throw new Error('a workload needs "model" and "job"');
    form.reset();
    const m = w.model, j = w.job, hw = w.hardware || {}, c = w.constraints || {};
    const mode = m.preset ? 'preset' : m.layers ? 'shape' : 'params';
    form.querySelector(`input[name=model_mode][value=${mode}]`).checked = true;
    if (mode === 'preset') setValue('preset', m.preset);
    if (mode === 'params') { setValue('params_b', m.params_b); setValue('m_vocab', m.vocab); }
    if (mode === 'shape') {
      for (const k of ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden']) setValue(k, m[k]);
      setValue('s_vocab', m.vocab);
      form.elements.gated_mlp.checked = m.gated_mlp !== false; form.elements.tied_embeddings.checked = !!m.tied_embeddings;
      form.elements.dropout.checked = !!m.dropout;
    }
    const jobFields = ['kind', 'precision', 'tokens', 'seq_len', 'global_batch', 'lora_rank', 'lora_base', 'lora_targets', 'prompt_len', 'output_len', 'concurrent', 'latency_target_ms', 'engine',
                       'framework', 'optimizer', 'loss', 'offload', 'grad_reduce_dtype'];
    for (const k of jobFields) {
      if (j[k] !== undefined && !(k === 'concurrent' && j[k] === 'max'))
        setValue(k, typeof j[k] === 'number' && j[k] >= 1e7 ? j[k].toExponential().replace('e+', 'e') : j[k]);
    }
    form.elements.concurrent_max.checked = j.concurrent === 'max';
    form.elements.flash_attention.checked = j.flash_attention !== false;
    setValue('instance', hw.instance); setValue('nodes', hw.nodes);
    for (const b of form.querySelectorAll('input[name=providers]')) b.checked = (c.providers || []).includes(b.value);
    setValue('gpu_models', (c.gpu_models || []).join(', '));
    for (const k of ['max_gpus', 'max_nodes', 'min_nodes', 'budget_usd', 'deadline_hours']) setValue(k, c[k]);
    setValue('objective', c.objective || 'cost');
    form.elements.spot.checked = !!c.spot; form.elements.tp_across_nodes.checked = !!c.tp_across_nodes;
    setValue('top', top || 50);
    // What the form cannot show travels unchanged.
    const known = new Set(['providers', 'gpu_models', 'max_gpus', 'max_nodes', 'min_nodes', 'budget_usd', 'deadline_hours', 'objective', 'spot', 'tp_across_nodes']);
    const otherConstraints = Object.fromEntries(Object.entries(c).filter(([k]) => !known.has(k)));
    const otherHardware = Object.fromEntries(Object.entries(hw).filter(([k]) => k !== 'instance' && k !== 'nodes'));
    explicitJob = new Set(Object.keys(j));
    tokensChosen = j.tokens !== undefined;
    const knownJob = new Set([...jobFields, 'flash_attention']);
    // A choice the form's list does not hold (a misspelt framework, the alias "adam") travels as
    // written, so the planner answers it (an error naming the field) instead of the page dropping it.
    const unshown = k => form.elements[k] instanceof HTMLSelectElement && j[k] !== undefined && form.elements[k].value !== String(j[k]);
    const otherJob = Object.fromEntries(Object.entries(j).filter(([k]) => !knownJob.has(k) || unshown(k)));
    const knownModel = new Set({preset: ['preset'], params: ['params_b', 'vocab'],
                                shape: ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden', 'vocab', 'gated_mlp', 'tied_embeddings', 'dropout']}[mode]);
    const otherModel = Object.fromEntries(Object.entries(m).filter(([k]) => !knownModel.has(k)));
    extras = {layout: w.layout, name: w.name, description: w.description,
              job: Object.keys(otherJob).length ? otherJob : undefined,
              model: Object.keys(otherModel).length ? otherModel : undefined,
              hardware: Object.keys(otherHardware).length ? otherHardware : undefined,
              constraints: Object.keys(otherConstraints).length ? otherConstraints : undefined};
    updateVisibility();
    showJson();
  }

  function showJson() {
    const w = workloadFromForm();
    if (document.activeElement !== jsonArea) jsonArea.value = JSON.stringify(w, null, 2);
    const top = Number(form.elements.top.value) || 50;
    const per = form.elements.per.value;
    reopenLink.href = LW.hashFor('plan', {w: JSON.stringify(w), top: String(top), per});
    return {w, top, per};
  }

  // The form control of a workload field the API names ("job.tokens" -> Tokens), if the form has one.
  function controlFor(field) {
    if (!field) return null;
    const [part, key] = field.split('.');
    const mode = form.querySelector('input[name=model_mode]:checked')?.value;
    // In Size mode the shape fields are hidden: a missing shape (the API names model.layers when the
    // model has no size) is the Parameters field the user left empty.
    const name = part === 'model' && key === 'vocab' ? (mode === 'params' ? 'm_vocab' : 's_vocab')
               : part === 'model' && mode === 'params' && key !== 'preset' ? 'params_b' : key;
    const control = ['model', 'job', 'hardware', 'constraints'].includes(part) && name ? form.elements[name] : null;
    return control instanceof HTMLElement && !control.closest('[hidden]') ? control : null;
  }
  function markInvalid(field) {
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const control = controlFor(field);
    if (!control) return;
    control.setAttribute('aria-invalid', 'true');
    control.focus({preventScroll: true});
    control.scrollIntoView({block: 'center'});
  }

  // What the browser cannot hand to the API as typed: a number field holding text that is not a
  // number reads as empty (the API would say "required"), and "Plans to show" is 1 to 100. Named and
  // marked here, as the API's own field errors are, instead of being replaced or misreported.
  function formProblem() {
    for (const input of form.querySelectorAll('input[type=number]')) {
      if (input.closest('[hidden]') || !input.validity.badInput) continue;
      const label = form.querySelector(`label[for="${input.id}"] span`);
      return {control: input, message: `${label ? label.firstChild.textContent.trim() : input.name}: not a number`};
    }
    const top = form.elements.top;
    const value = Number(top.value);
    if (top.value !== '' && !(Number.isInteger(value) && value >= 1 && value <= 100))
      return {control: top, message: `Plans to show: a whole number from 1 to 100, got ${top.value}`};
    return null;
  }

  async function run() {
    markInvalid(null);
    const problem = formProblem();
    if (problem) {
      LW.showError(new Error(problem.message), 'Form');
      problem.control.setAttribute('aria-invalid', 'true');
      problem.control.focus({preventScroll: true});
      return;
    }
    const {w, top, per} = showJson();
    lastRunState = {w: JSON.stringify(w), top: String(top), per};
    // A new question is a new history entry (Back returns to the previous answer); the URL's own
    // workload, run again (a reopened link, Back itself), is not.
    const shown = new URLSearchParams(location.hash.split('?')[1] || '');
    const sameQuestion = shown.get('w') === lastRunState.w && (shown.get('top') || '50') === lastRunState.top &&
                         (shown.get('per') || 'instance') === per;
    LW.setState('plan', lastRunState, undefined, !sameQuestion && shown.has('w'));
    lastRunKey = JSON.stringify([w, top, per]);
    runButton.disabled = true;
    results.setAttribute('aria-busy', 'true');
    results.replaceChildren(h('p', {class: 'note'}, 'Searching…'));
    const started = performance.now();
    try {
      const answer = await api('/v1/recommendations?top=' + top + '&per=' + per, {method: 'POST', headers: {'Content-Type': 'application/json', 'Accept': 'application/json'}, body: JSON.stringify(w)});
      LW.clearError();
      lastAnswer = answer; selected = answer.results[pendingSelect] ? pendingSelect : 0;
      lastOffload = w.job.offload;
      answerDeadline = w.constraints && w.constraints.deadline_hours !== undefined ? w.constraints.deadline_hours : null;
      pendingSelect = 0;
      await renderResults(answer, (performance.now() - started) / 1000);
      // The answer where the eye is: a form scrolled past its own results (or a phone's stacked
      // layout) brings them into view.
      const resultsTop = results.getBoundingClientRect().top;
      if (resultsTop < 0 || resultsTop > window.innerHeight * 0.8) results.scrollIntoView({block: 'start'});
    } catch (err) {
      results.replaceChildren();
      LW.showError(err, 'Recommendation');
      // The field the API names is marked and focused in the form (the banner says what is wrong).
      markInvalid(err.problem && err.problem.field);
    } finally {
      runButton.disabled = false;
      results.removeAttribute('aria-busy');
    }
  }

  // A serving plan has no micro-batch, ZeRO or recompute: its DP is replicas, its EP/ETP place experts.
  // CPU offload (ZeRO-Offload) is the job's, so every plan of a training answer has it.
  function layoutText(l, inference, offload) {
    const parts = [`TP ${l.tp}`, `PP ${l.pp}`, inference ? `${l.dp} ${l.dp === 1 ? 'replica' : 'replicas'}` : `DP ${l.dp}`];
    if (l.cp > 1) parts.push(`CP ${l.cp}`);
    if (l.ep > 1) parts.push(`EP ${l.ep}`);
    if (l.etp > 1) parts.push(`ETP ${l.etp}`);
    if (l.virtual_stages > 1) parts.push(`VP ${l.virtual_stages}`);
    if (!inference) {
      parts.push(`mb ${l.micro_batch}`, `ZeRO ${l.zero}`);
      if (l.dp_shard < l.dp) parts.push(`sharded over ${l.dp_shard} of DP (${l.dp / l.dp_shard} copies)`);
      if (l.recompute !== 'none') parts.push(l.recompute + ' recompute');
      if (l.tp_comm_overlap) parts.push('TP overlap');
      if (l.overlap_p2p_comm) parts.push('PP overlap');
      if (l.overlap_grad_reduce && (l.dp * l.cp > 1 || l.edp > 1)) parts.push('DP overlap');
      if (offload && offload !== 'none') parts.push('offload: ' + (OFFLOAD_WORDS[offload] || offload));
    }
    return parts.join(' · ');
  }

  // A plan the planner cannot vouch for: its memory inside the error band, or CPU offload onto a host
  // whose size the catalog does not state. The API ranks these after the others, whatever they cost.
  const unsure = p => p.memory_verdict === 'tight' || p.offload_host_checked === false;

  function paretoFront(points) {
    const sorted = points.filter(p => p.x !== null && p.y !== null).sort((a, b) => a.x - b.x || a.y - b.y);
    const front = [];
    let best = Infinity;
    // A plan is on the front only if it is cheaper by more than rounding (equal costs: the faster one).
    for (const p of sorted) if (p.y < best * (1 - 1e-9)) { front.push(p); best = p.y; }
    return front;
  }

  async function renderResults(answer, seconds) {
    for (const c of Object.values(charts)) c.destroy();
    charts = {};
    const plans = answer.results || [];
    const summary = h('div', {class: 'summary'},
      [[answer.results.length, 'plans shown'], [num(answer.feasible), 'feasible (of those evaluated)'], [num(answer.evaluated), 'layouts evaluated (the rest proven to lose)'],
       [num(answer.hardware_considered), 'hardware considered'], [answer.objective.replace(/_/g, ' '), 'objective'],
       [answer.model && answer.model.name, 'model'], [num(seconds, 2) + ' s', 'search']]
        .map(([v, label]) => h('div', {}, h('b', {}, v), h('span', {}, label))));
    if (!plans.length) {
      // Custom hardware without a price cannot rank by cost: that is not "nothing fits".
      const unpriced = (answer.rejected || []).length && answer.rejected.every(r => (r.reasons || []).every(x => x.reason === 'unpriced'));
      // "Fits" is memory's word: the heading says nothing fits only where memory turned down more
      // layouts than any other reason; a budget, deadline, latency target, constraint or a GPU that
      // cannot run the job means the plans do not qualify.
      const byReason = {};
      for (const r of answer.rejected || [])
        for (const x of r.reasons || []) byReason[x.reason] = (byReason[x.reason] || 0) + (x.count || 1);
      const top = Object.entries(byReason).sort((a, b) => b[1] - a[1])[0];
      const memoryMost = top !== undefined && top[0] === 'memory';
      results.replaceChildren(h('section', {class: 'panel'},
        h('h2', {}, unpriced ? 'Nothing to rank by cost' : memoryMost ? 'No plan fits' : 'No plan qualifies'), summary,
        unpriced ? h('p', {}, 'The hardware has no price: set the objective to "shortest time", or give hardware.custom.price_usd_per_hour.') : null,
        h('p', {id: 'plan-why-none'}, answer.why_no_results ? whyNoResults(answer.why_no_results, (answer.rejected || []).length)
                                                            : 'Nothing fits these constraints. Loosen them (more nodes, a larger budget or deadline, other GPUs).'),
        rejectedList(answer), skippedList(answer)));
      return;
    }
    const training = plans[0].job_kind !== 'inference';
    // One unit per time column, named in its header, so a column can be scanned.
    const stepCol = durationColumn(plans.map(p => training ? p.step_time_s : (p.tpot_s ?? p.step_time_s)));
    const jobCol = durationColumn(plans.map(p => p.job_hours === null ? null : p.job_hours * 3600));
    const ttftCol = durationColumn(plans.map(p => p.ttft_s));
    const loadCol = durationColumn(plans.map(p => p.ttft_under_load_s));
    timeColumns = {step: stepCol, job: jobCol, ttft: ttftCol, ttft_load: loadCol};
    const columns = [
      ['#', 'rank by the objective', true],
      ['Instance', 'instance type (provider:name; custom hardware when the workload describes its own), its nodes × GPUs per node'],
      ['Layout', GLOSSARY.layout],
      [(training ? 'Step' : 'Per output token') + ` (${stepCol.unit})`, training ? GLOSSARY.step : GLOSSARY.decode, true],
      [`Job time (${jobCol.unit})`, 'wall-clock time of the whole job (its tokens)', true],
      ['Cost', 'price of the machines for the job time', true],
      ['$/M tokens', 'cost per million tokens processed (training) or generated (inference)', true],
      [training ? 'MFU (%)' : `TTFT idle (${ttftCol.unit})`, training ? GLOSSARY.mfu : GLOSSARY.ttft, true],
      ...(training ? [] : [[`TTFT under load (${loadCol.unit})`, GLOSSARY.ttft, true]]),
      ['Memory margin (GiB)', GLOSSARY.margin, true],
      ['Bottleneck', GLOSSARY.bottleneck]];
    const table = h('table', {id: 'plans-table'},
      h('caption', {class: 'sr-only'}, 'Ranked plans; select one for its breakdown'),
      h('thead', {}, h('tr', {}, columns.map(([t, title, numeric]) => h('th', {scope: 'col', title, class: numeric ? 'num' : null}, t)))),
      h('tbody', {}, plans.map((p, i) => [
        // Where the ranking turns to plans the planner cannot vouch for: a cheaper row below reads right.
        i > 0 && unsure(p) && !unsure(plans[i - 1])
          ? h('tr', {class: 'divider'}, h('td', {colspan: columns.length, title: GLOSSARY.rankedAfter},
              h('strong', {}, 'Ranked after: '), 'plans the planner cannot fully check (tight memory, unchecked host)'))
          : null,
        h('tr', {class: 'clickable', tabindex: 0, 'data-index': i, 'aria-selected': i === selected ? 'true' : 'false',
          onclick: () => select(i), onkeydown: e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(i); } }},
        h('td', {class: 'num'}, i + 1),
        h('td', {class: 'instance'}, h('span', {class: 'mono'}, p.custom_hardware ? p.instance : h('a', {href: LW.hashFor('instances', null, p.instance)}, p.instance)),
          h('div', {class: 'note'}, `${p.nodes} × ${p.gpus_per_node} ${p.gpu_model}`),
          p.offload_host_checked === false ? h('div', {}, h('span', {class: 'badge warn', title: GLOSSARY.host}, 'host not checked')) : null,
          p.interval && p.interval.widened ? h('div', {}, h('span', {class: 'badge', title: GLOSSARY.extrapolated}, 'extrapolated')) : null),
        h('td', {class: 'wrap'}, layoutText(p.layout, !training, lastOffload)),
        h('td', {class: 'num'}, stepCol.of(training ? p.step_time_s : (p.tpot_s ?? p.step_time_s))),
        h('td', {class: 'num'}, jobCol.of(p.job_hours === null ? null : p.job_hours * 3600),
          p.meets_deadline && p.interval && p.interval.job_hours && answerDeadline !== null && p.interval.job_hours.p90 > answerDeadline
            ? [' ', h('span', {class: 'badge warn', title: GLOSSARY.deadlineRisk}, 'at risk')] : null),
        h('td', {class: 'num'}, usd(p.cost_usd)),
        h('td', {class: 'num'}, p.usd_per_million_tokens === null ? fmt(null) : usd(p.usd_per_million_tokens)),
        h('td', {class: 'num'}, training ? num(p.mfu * 100, 1) : ttftCol.of(p.ttft_s)),
        training ? null : h('td', {class: 'num'}, loadCol.of(p.ttft_under_load_s)),
        h('td', {class: 'num'}, num(gib(p.memory_margin_gb), 1), p.memory_verdict === 'tight' ? [' ', h('span', {class: 'badge warn', title: GLOSSARY.tight}, 'tight')] : null),
        h('td', {class: 'wrap'}, shortBottleneck(p.bottleneck)))])));
    // Each cell carries its column's name: a phone shows a plan as a card, value under name (app.css).
    for (const tr of table.tBodies[0].rows)
      if (!tr.classList.contains('divider')) [...tr.cells].forEach((td, j) => { td.dataset.label = columns[j][0]; });
    // The headers' help as a list a touch screen can open (a title shows only under a mouse).
    const columnHelp = h('details', {id: 'plans-columns', class: 'column-help'}, h('summary', {}, 'What the columns mean'),
      h('dl', {}, columns.filter(([, title]) => title).map(([t, title]) => [h('dt', {}, t), h('dd', {}, title)])));
    const detail = h('div', {id: 'plan-detail'});
    results.replaceChildren(
      h('section', {class: 'panel', 'aria-labelledby': 'h-ranked'},
        h('h2', {id: 'h-ranked'}, 'Ranked plans'), summary, columnHelp, h('div', {class: 'table-wrap'}, table), skippedList(answer)),
      h('section', {class: 'panel', 'aria-labelledby': 'h-pareto', style: null},
        h('h2', {id: 'h-pareto'}, 'Cost vs time'),
        h('p', {class: 'note'}, `Each point is one of the ${plans.length} plans returned (of ${num(answer.feasible)} feasible; `,
          'ask for up to 100). The line joins the Pareto front: no other plan is both cheaper and faster. Click a point to select the plan.'),
        h('div', {class: 'chart-box'}, h('canvas', {id: 'chart-pareto', role: 'img', 'aria-label': 'Job cost against job time for each plan, Pareto front highlighted'}))),
      detail);
    const Chart = await LW.chartjs();
    drawPareto(Chart, plans);
    select(selected);
  }

  // The planner's sentences name workload fields as the JSON does ("drop job.offload"), one wording for
  // every front end; the page adds the form's label beside a field it has a control for.
  function inFormTerms(text) {
    return text.replace(/\b(job|constraints|hardware)\.([a-z_]+)\b/g, (path, part, key) => {
      const control = controlFor(path);
      const label = control && form.querySelector(`label[for="${control.id}"] > span`);
      return label ? `${path} (“${label.firstChild.textContent.trim()}” in the form)` : path;
    });
  }

  // The plan's p10-p90 interval and memory verdict, as the CLI prints them.
  function intervalText(p) {
    const iv = p.interval;
    if (!iv) return null;
    const range = (r, f) => r ? f(r.p10) + ' – ' + f(r.p90) : null;
    const parts = [['tokens/s', range(iv.tokens_per_s, v => num(v, 0))], ['$/M tokens', range(iv.usd_per_million_tokens, usd)],
                   ['job time', range(iv.job_hours, v => num(v, 1) + ' h')], ['job cost', range(iv.cost_usd, usd)]].filter(([, v]) => v);
    const verdict = {fits: 'fits', tight: 'tight: fits, inside the memory model\'s error band', no: 'does not fit'}[p.memory_verdict] || p.memory_verdict;
    return h('p', {id: 'plan-interval'}, h('strong', {}, 'p10–p90: '), parts.map(([k, v]) => `${k} ${v}`).join('; '),
      iv.widened ? ' (widened: see the warnings)' : '', '. ', h('span', {class: 'note'}, iv.basis + '. '),
      h('strong', {}, 'Memory: '), verdict + '.');
  }

  // Why an unsure plan ranks below cheaper-looking ones, where the API's `why` does not say so already.
  function rankedAfterText(p) {
    if (!unsure(p) || /ranked after/i.test(p.why || '')) return null;
    const reasons = [p.memory_verdict === 'tight' ? 'its memory is tight (inside the memory model\'s error band)' : null,
                     p.offload_host_checked === false ? 'the catalog gives no memory or vCPU figure for its CPU-offload host, so the offloaded states were not checked' : null];
    return [p.why ? ' ' : '', h('span', {class: 'note'}, 'Ranked after the plans the planner can fully check: ' + reasons.filter(Boolean).join('; ') + '.')];
  }

  function shortBottleneck(text) {
    if (!text) return '';
    const first = text.split(/[.;:(]/)[0];
    return h('span', {title: text}, first.length > 60 ? first.slice(0, 58) + '…' : first);
  }

  // The API's sentence in the page's words: its field name ("rejected") becomes the list below it,
  // and one instance type is not "types".
  function whyNoResults(text, listed) {
    const t = text.charAt(0).toUpperCase() + text.slice(1).replace(/\b1 instance types\b/g, '1 instance type');
    return listed ? t.replace(/[;,.]?\s*each one's reasons are (?:in|listed under) rejected\.?\s*$/, '. Each one\'s reasons:') : t;
  }

  // Why each instance type gave no plan, the most common main reason first: ten, then the rest folded.
  const REJECTED_SHOWN = 10;
  function rejectedList(answer) {
    const rejected = answer.rejected || [];
    // One machine whose reason the sentence above already gives: no list repeating it.
    const said = answer.why_no_results || '';
    if (!rejected.length || (rejected.length === 1 && (rejected[0].reasons || []).every(x => said.includes(x.detail)))) return null;
    const often = {};
    for (const r of rejected) often[r.reason] = (often[r.reason] || 0) + 1;
    const sorted = rejected.slice().sort((a, b) => (often[b.reason] || 0) - (often[a.reason] || 0));
    const item = r => {
      const reasons = r.reasons && r.reasons.length ? r.reasons : [{reason: r.reason}];
      return h('li', {}, h('span', {class: 'mono'}, r.instance), ': ',
        reasons.map(x => (x.detail || x.reason) + (reasons.length > 1 && x.count > 1 ? ` (${num(x.count, 0)} layouts)` : '')).join('; '));
    };
    const rest = sorted.length - REJECTED_SHOWN;
    return h('div', {id: 'plan-rejected'},
      h('ul', {class: 'plain'}, sorted.slice(0, REJECTED_SHOWN).map(item)),
      rest > 0 ? h('details', {}, h('summary', {}, `${rest} more`), h('ul', {class: 'plain'}, sorted.slice(REJECTED_SHOWN).map(item))) : null);
  }

  function skippedList(answer) {
    if (!answer.skipped || !answer.skipped.length) return null;
    const n = answer.skipped.length;
    return h('details', {}, h('summary', {}, n + (n === 1 ? ' hardware choice skipped' : ' hardware choices skipped')),
      h('ul', {class: 'plain'}, answer.skipped.slice(0, 200).map(s => h('li', {}, typeof s === 'string' ? s : (s.instance ? s.instance + ': ' + (s.reason || '') : JSON.stringify(s))))));
  }

  // A log axis labels 1, 2 and 5 of each decade where they have room, else the decades (every few
  // where even those crowd): Chart.js skips labels as if ticks were evenly spaced, so they overlapped.
  function thinLogTicks(scale) {
    const vertical = !scale.isHorizontal();
    const perDecade = (vertical ? scale.height : scale.width) * 0.8 / Math.max(Math.log10(scale.max / scale.min), 0.1);
    const need = vertical ? 18 : 64;  // px from one label to the next: a line of text, or "10,000"
    const exp = v => Math.floor(Math.log10(v) + 1e-9);
    const lead = v => Math.round(v / 10 ** exp(v));
    const leads = perDecade * Math.log10(2) >= need ? [1, 2, 5] : [1];  // 1 to 2 is the closest pair
    const every = leads.length > 1 ? 1 : Math.ceil(need / perDecade);
    const kept = scale.ticks.filter(t => leads.includes(lead(t.value)) && ((exp(t.value) % every) + every) % every === 0);
    scale.ticks = kept.length >= 2 || every === 1 ? kept : scale.ticks.filter(t => lead(t.value) === 1);
  }

  function drawPareto(Chart, plans) {
    const points = plans.map((p, i) => ({x: p.job_hours, y: p.cost_usd, i}));
    const usable = points.filter(p => p.x !== null && p.y !== null);
    const front = paretoFront(usable);
    const xs = usable.map(p => p.x), ys = usable.map(p => p.y);
    const logX = xs.length && Math.max(...xs) / Math.min(...xs) > 20;
    const logY = ys.length && Math.max(...ys) / Math.min(...ys) > 20;
    charts.pareto = new Chart(document.getElementById('chart-pareto'), {
      type: 'scatter',
      data: {datasets: [
        {label: 'Selected', data: [], pointRadius: 9, pointStyle: 'rectRot', backgroundColor: '#f59e0b', borderColor: '#7c2d12', borderWidth: 2, order: 0},
        {label: 'Pareto front', data: front, showLine: true, borderColor: '#dc2626', backgroundColor: '#dc2626', pointRadius: 5, borderWidth: 2, order: 1},
        {label: 'Plans', data: usable, backgroundColor: 'rgba(29,78,216,0.55)', borderColor: '#1d4ed8', pointRadius: 4, order: 2},
      ]},
      options: {
        responsive: true, maintainAspectRatio: false,
        scales: {
          x: {type: logX ? 'logarithmic' : 'linear', title: {display: true, text: 'Job time (hours' + (logX ? ', log scale)' : ')')},
              afterBuildTicks: logX ? thinLogTicks : undefined, ticks: logX ? {callback: v => num(Number(v)), maxRotation: 0} : {}},
          y: {type: logY ? 'logarithmic' : 'linear', title: {display: true, text: 'Job cost (USD' + (logY ? ', log scale)' : ')')},
              afterBuildTicks: logY ? thinLogTicks : undefined, ticks: {callback: v => usdShort(Number(v))}},
        },
        plugins: {tooltip: {callbacks: {label: ctx => {
          const p = plans[ctx.raw.i];
          return `#${ctx.raw.i + 1} ${p.instance} ×${p.nodes}: ${usd(p.cost_usd)}, ${duration(p.job_hours * 3600)}`;
        }}}},
        onClick: (evt, elements) => { if (elements.length) { const raw = elements[0].element.$context.raw; if (raw && raw.i !== undefined) select(raw.i); } },
      },
    });
  }

  function select(i) {
    if (!lastAnswer || !lastAnswer.results[i]) return;
    selected = i;
    // The selection is part of the page's state: a reload or a shared URL opens this plan.
    if (lastRunState) LW.setState('plan', i ? Object.assign({}, lastRunState, {sel: String(i + 1)}) : lastRunState);
    const p = lastAnswer.results[i];
    for (const tr of results.querySelectorAll('#plans-table tbody tr[data-index]')) {
      const on = Number(tr.dataset.index) === i;
      tr.classList.toggle('selected', on);
      tr.setAttribute('aria-selected', on ? 'true' : 'false');
    }
    if (charts.pareto) {
      charts.pareto.data.datasets[0].data = p.job_hours !== null && p.cost_usd !== null ? [{x: p.job_hours, y: p.cost_usd, i}] : [];
      charts.pareto.update();
    }
    renderDetail(p, i);
  }

  // A time as the table's column shows it, with the column's unit: the detail and the row agree.
  function inColumn(column, seconds) {
    return seconds === null || seconds === undefined ? fmt(null) : `${timeColumns[column].of(seconds)} ${timeColumns[column].unit}`;
  }

  // The sequences a serving plan runs at once, the whole job's; with several replicas (DP) each
  // engine runs its share: "1,024 (4 replicas × 256)".
  function concurrentText(p) {
    const dp = p.layout && p.layout.dp;
    if (p.concurrent === null || p.concurrent === undefined || !(dp > 1)) return num(p.concurrent, 0);
    const each = p.concurrent / dp;
    return `${num(p.concurrent, 0)} (${dp} replicas × ${Number.isInteger(each) ? num(each, 0) : '≈' + num(each, 0)})`;
  }

  // The step's terms that this plan has (no offload or EP bar where it has none). A decode step's
  // first term is its layers streaming weights and KV cache from GPU memory (HBM or GDDR), as its
  // bottleneck says; only a training step's is compute.
  function timeParts(p) {
    const first = p.job_kind !== 'inference' ? 'Compute'
      : /^GPU memory bandwidth/.test(p.bottleneck || '') ? 'Weights + KV read (GPU memory)'
      : 'Decode layers (memory reads, GEMMs)';
    return TIME_PARTS.filter(([k]) => p.time_s[k]).map(([k, label, color]) => [k, k === 'compute' ? first : label, color]);
  }

  async function renderDetail(p, i) {
    const detail = document.getElementById('plan-detail');
    if (!detail) return;
    for (const k of ['memory', 'time']) if (charts[k]) { charts[k].destroy(); delete charts[k]; }
    const m = Object.fromEntries(Object.entries(p.memory_gb).map(([k, v]) => [k, gib(v)])), t = p.time_s;
    const parts = timeParts(p), stepName = p.job_kind === 'inference' ? 'Decode step' : 'Step';
    const bw = Object.entries(p.bandwidth_source || {});
    // A null link (no network stated in the catalog) is unknown, not 0 GB/s.
    const links = Object.entries(p.links || {}).map(([k, v]) => k.replace(/_gbytes_per_s.*$/, '').replace(/_/g, ' ') + ' ' +
                                                     (v === null ? 'unknown (the catalog states no network)'
                                                                 : num(v) + ' GB/s' + (k.endsWith('_per_gpu') ? ' per GPU' : '')));
    detail.replaceChildren(h('section', {class: 'panel', 'aria-labelledby': 'h-detail'},
      h('h2', {id: 'h-detail'}, `Plan #${i + 1}: ${p.instance} × ${p.nodes} (${p.gpus} ${p.gpu_model})`),
      h('p', {class: 'bottleneck', id: 'plan-bottleneck'}, h('strong', {}, 'Bottleneck: '), p.bottleneck),
      p.why || unsure(p) ? h('p', {id: 'plan-why'}, h('strong', {}, 'Why this plan: '), inFormTerms(p.why || ''), rankedAfterText(p)) : null,
      intervalText(p),
      h('div', {class: 'summary'},
        [[layoutText(p.layout, p.job_kind === 'inference', lastOffload), 'layout'],
         [inColumn('step', p.job_kind === 'inference' ? (p.tpot_s ?? p.step_time_s) : p.step_time_s), p.job_kind === 'inference' ? 'per output token' : 'step'],
         [num(p.tokens_per_s, 0), 'tokens/s (whole job)'], [p.job_kind === 'inference' ? inColumn('ttft', p.ttft_s) : num(p.mfu * 100, 1) + '%', p.job_kind === 'inference' ? 'time to first token, idle' : 'MFU'],
         ...(p.job_kind !== 'inference' && p.framework ? [[p.framework, 'stack the step is planned as']] : []),
         ...(p.job_kind === 'inference' ? [[inColumn('ttft_load', p.ttft_under_load_s), 'time to first token under load'],
                                           [concurrentText(p), `sequences together on ${p.engine}` + (p.concurrent_is_max ? MAX_CONCURRENT[p.max_concurrent_limit] : '')]] : []),
         [usd(p.price_usd_per_hour) + '/h', 'price'], [usd(p.cost_usd), 'cost'], [inColumn('job', p.job_hours === null ? null : p.job_hours * 3600), 'job time']]
          .map(([v, label]) => h('div', {}, h('b', {}, v), h('span', {}, label)))),
      h('div', {class: 'charts2'},
        h('div', {}, h('h3', {}, 'Memory per GPU against capacity'),
          h('div', {class: 'chart-box small'}, h('canvas', {id: 'chart-memory', role: 'img',
            'aria-label': `Memory per GPU: ${num(m.total, 1)} GiB used of ${num(m.capacity, 1)} GiB`})),
          h('p', {class: 'note', id: 'plan-memory-note'}, `${num(m.total, 1)} GiB of ${num(m.capacity, 1)} GiB usable (margin ${num(gib(p.memory_margin_gb), 1)} GiB). `,
            MEMORY_PARTS.filter(([k]) => m[k]).map(([k, label]) => `${label} ${num(m[k], 1)}`).join(', ') + ' GiB. ',
            'GiB (2³⁰ bytes) is the unit of a card\'s nominal size: an "80 GB" card holds 80 GiB. The sentences above count 10⁹-byte GB.')),
        h('div', {}, h('h3', {}, stepName + ' time breakdown'),
          h('div', {class: 'chart-box small'}, h('canvas', {id: 'chart-time', role: 'img', 'aria-label': `${stepName} time ${duration(p.step_time_s)} broken down`})),
          h('p', {class: 'note', id: 'plan-time-note'}, `${stepName} ${duration(p.step_time_s)}: `,
            parts.map(([k, label]) => `${label} ${duration(t[k])}` + (EXPOSED_PART[k] ? ` (${duration(t[EXPOSED_PART[k]])} exposed)` : '')).join(', ') + '. ',
            'Communication the planner overlaps with compute shows in its own bar, but only its exposed part adds to the step' +
            (t.dequant ? '; dequantisation is part of compute, shown apart.' : '.')))),
      bw.length ? [h('h3', {}, 'Bandwidths used'), links.length ? h('p', {}, 'Achievable: ' + links.join('; ') + '.') : null, h('ul', {class: 'plain'}, bw.map(([k, v]) => h('li', {}, h('strong', {}, k.replace(/_/g, ' ') + ': '), typeof v === 'string' ? v : JSON.stringify(v))))] : null,
      p.warnings && p.warnings.length ? [h('h3', {}, 'Warnings'), h('ul', {class: 'plain'}, p.warnings.map(w => h('li', {}, h('span', {class: 'badge warn'}, 'warning'), ' ', typeof w === 'string' ? inFormTerms(w) : JSON.stringify(w))))] : null));
    const Chart = await LW.chartjs();
    if (selected !== i) return;
    const memParts = MEMORY_PARTS.filter(([k]) => m[k]);  // a part this job does not hold (KV cache in training) has no legend entry
    charts.memory = new Chart(document.getElementById('chart-memory'), {
      type: 'bar',
      data: {labels: ['Used', 'Capacity'], datasets: memParts.map(([k, label, color]) => ({label, data: [m[k], 0], backgroundColor: color}))
        .concat([{label: 'Usable capacity', data: [0, m.capacity], backgroundColor: '#cbd5e1'}])},
      options: {indexAxis: 'y', responsive: true, maintainAspectRatio: false,
        scales: {x: {stacked: true, title: {display: true, text: 'GiB per GPU'}}, y: {stacked: true}},
        plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}}, tooltip: {callbacks: {label: ctx => `${ctx.dataset.label}: ${num(ctx.raw, 2)} GiB`}}}},
    });
    charts.time = new Chart(document.getElementById('chart-time'), {
      type: 'bar',
      data: {labels: parts.map(([, label]) => label).concat([stepName]),
             datasets: [{label: 'seconds', data: parts.map(([k]) => t[k]).concat([p.step_time_s]),
                         backgroundColor: parts.map(([, , c]) => c).concat(['#0f172a'])}]},
      options: {indexAxis: 'y', responsive: true, maintainAspectRatio: false,
        scales: {x: {title: {display: true, text: 'seconds per step'}}},
        plugins: {legend: {display: false}, tooltip: {callbacks: {label: ctx => duration(ctx.raw)}}}},
    });
  }

  LW.register('plan', {
    async render(params) {
      const fresh = !built;
      if (!built) {
        section.replaceChildren(h('h1', {id: 'h-plan'}, 'Plan a job'), h('p', {class: 'note'}, 'Loading…'));
        const [instances, models] = await Promise.all([LW.allInstances(), LW.api('/v1/models')]);
        build(instances, models.models.map(m => m.name));
        loadWorkload(FRESH, 50);
        tokensChosen = false;  // the fresh form's tokens are its kind's starting value
      }
      // "Plan a job on it" (an instance's detail): that instance in the workload the form holds; a
      // fresh form gets a small example job on it, and says so.
      const instance = params.get('instance');
      if (instance && !params.get('w')) {
        const example = fresh ? await instanceExample(instance) : null;
        if (fresh) loadWorkload(example.workload, 50);
        else { setValue('instance', instance); showJson(); }
        await run();
        if (fresh) results.prepend(h('p', {class: 'note', id: 'p-example-note'},
          'An example job (' + example.words + ') on ' + instance + ': change the model and job in the form, then Recommend.'));
        return;
      }
      const text = params.get('w');
      if (text) {
        const top = Number(params.get('top')) || 50;
        const per = params.get('per') || 'instance';
        if (lastRunKey === JSON.stringify([JSON.parse(text), top, per])) return;  // our own replaceState
        loadWorkload(JSON.parse(text), top);
        form.elements.per.value = per;
        pendingSelect = Math.max(0, (Number(params.get('sel')) || 1) - 1);
        await run();
      }
    },
  });
})();

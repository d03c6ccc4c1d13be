// The console's page renderers (browser, ES module): JSON from the admin endpoints in, DOM nodes
// out. Every string from the broker enters the page as a text node (h() never parses markup), so
// a topic, group or client id cannot become markup or script whatever it holds.

/** An element with attributes and children; strings and numbers become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A table; a cell is a value, or { v, cls, num } for a class or right alignment. */
export function table(testid, headers, rows, rowClass = () => undefined) {
  return h('table', { 'data-testid': testid },
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.map((r, i) => h('tr', { class: rowClass(i) }, r.map((c) => {
      if (c !== null && typeof c === 'object' && !(c instanceof Node)) return h('td', { class: [c.num ? 'num' : '', c.cls ?? ''].join(' ').trim() || undefined }, c.v);
      return h('td', { class: typeof c === 'number' ? 'num' : undefined }, c);
    })))));
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

export function fmtRate(n, unit = '/s') {
  if (n === null || n === undefined) return '–';
  return `${n >= 100 ? Math.round(n) : n.toFixed(1)}${unit}`;
}

export function fmtNum(n) {
  return n === null || n === undefined ? '–' : String(n);
}

function ids(list) {
  return `[${list.join(',')}]`;
}

/** The q-quantile (seconds) of what a histogram counted between two readings, as histogram_quantile does; null without observations. */
export function windowQuantile(prev, cur, q) {
  const counts = cur.counts.map((c, i) => c - (prev?.counts[i] ?? 0));
  const total = cur.count - (prev?.count ?? 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] >= rank) {
      const lo = i === 0 ? 0 : cur.le[i - 1];
      const inBucket = counts[i] - below;
      return inBucket <= 0 ? cur.le[i] : lo + (cur.le[i] - lo) * ((rank - below) / inBucket);
    }
    below = counts[i];
  }
  return cur.le[cur.le.length - 1];
}

/** Rates and p99s (ms) between two readings of a broker's cumulative traffic (/v1/traffic's shape); null without an earlier one. */
export function trafficRates(prev, traffic) {
  if (prev === null || prev === undefined) return null;
  const s = (traffic.atMs - prev.atMs) / 1000;
  if (s <= 0) return null;
  const ms = (q) => (q === null ? null : q * 1000);
  return {
    bytesIn: (traffic.bytesIn - prev.bytesIn) / s,
    bytesOut: (traffic.bytesOut - prev.bytesOut) / s,
    messagesIn: (traffic.messagesIn - prev.messagesIn) / s,
    messagesOut: (traffic.messagesOut - prev.messagesOut) / s,
    produceP99Ms: ms(windowQuantile(prev.produceSeconds, traffic.produceSeconds, 0.99)),
    fetchP99Ms: ms(windowQuantile(prev.fetchServeSeconds, traffic.fetchServeSeconds, 0.99)),
  };
}

function fmtMs(ms) {
  return ms === null || ms === undefined ? '–' : `${ms.toFixed(2)} ms`;
}

function card(label, value, testid) {
  return h('div', { class: 'card' }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-testid': testid }, value));
}

export function overviewSummary(cluster, health, rates) {
  const controller = cluster.controllerId < 0 ? '(none)' : String(cluster.controllerId);
  const healthy = health.status === 'ready' && (health.failing ?? []).length === 0;
  return [
    card('Cluster', cluster.clusterId, 'cluster-id'),
    card('This broker', String(cluster.nodeId), 'node-id'),
    card('Active controller', controller, 'controller'),
    card('Health', h('span', { class: healthy ? 'ok' : 'bad' }, health.status + ((health.failing ?? []).length ? ` (failing: ${health.failing.join(', ')})` : '')), 'health'),
    card('In (this broker)', rates ? `${fmtBytes(rates.bytesIn)}/s · ${fmtRate(rates.messagesIn, ' msg/s')}` : '–', 'rate-in'),
    card('Out (this broker)', rates ? `${fmtBytes(rates.bytesOut)}/s · ${fmtRate(rates.messagesOut, ' msg/s')}` : '–', 'rate-out'),
    card('Produce p99', fmtMs(rates?.produceP99Ms), 'produce-p99'),
    card('Fetch p99', fmtMs(rates?.fetchP99Ms), 'fetch-p99'),
  ];
}

/** Cards of the whole cluster (/v1/cluster/overview): quorum, partition health, summed throughput of the brokers that answered. */
export function clusterSummary(overview, brokerRates) {
  const q = overview.quorum;
  const sum = (key) => {
    const known = [...brokerRates.values()].filter((r) => r !== null);
    return known.length === 0 ? null : known.reduce((s, r) => s + r[key], 0);
  };
  const bytesIn = sum('bytesIn');
  const bytesOut = sum('bytesOut');
  return [
    card('Quorum', q === null ? '(none)' : `leader ${q.leaderId < 0 ? 'none' : q.leaderId} · epoch ${q.epoch} · voters ${q.voters.join(',')}`, 'quorum'),
    card('Under-replicated', h('span', { class: overview.underReplicatedPartitions ? 'bad' : 'ok' }, String(overview.underReplicatedPartitions)), 'under-replicated'),
    card('Offline partitions', h('span', { class: overview.offlinePartitions ? 'bad' : 'ok' }, String(overview.offlinePartitions)), 'offline'),
    card('Cluster in', bytesIn === null ? '–' : `${fmtBytes(bytesIn)}/s · ${fmtRate(sum('messagesIn'), ' msg/s')}`, 'cluster-in'),
    card('Cluster out', bytesOut === null ? '–' : `${fmtBytes(bytesOut)}/s · ${fmtRate(sum('messagesOut'), ' msg/s')}`, 'cluster-out'),
  ];
}

function brokerState(b) {
  return b.fenced ? 'fenced' : b.warming ? 'warming' : b.live ? 'live' : 'down';
}

/**
 * Every registered broker (/v1/cluster/overview) with its own figures: `brokerRates` maps a
 * broker id to its rates over the last poll (null until two readings).
 */
export function brokersTable(overview, brokerRates) {
  const down = (b) => b.fenced || !b.live || !b.reachable;
  return table('brokers', ['BROKER', 'CLIENT LISTENER', 'RACK', 'STATE', 'CONTROLLER', 'ADMIN', 'REACHABLE', 'HEALTH', 'IN', 'OUT', 'PRODUCE p99', 'FETCH p99', 'LOOP DELAY p99'],
    overview.brokers.map((b) => {
      const r = brokerRates.get(b.id) ?? null;
      const f = b.figures;
      return [
        b.id,
        b.host === null ? '–' : `${b.host}:${b.port}`,
        b.rack ?? '–',
        { v: brokerState(b), cls: b.fenced || !b.live ? 'bad' : 'ok' },
        b.controller ? 'active' : '',
        b.adminAddress ?? '–',
        { v: b.reachable ? 'yes' : `no: ${b.error}`, cls: b.reachable ? 'reachable' : 'reachable bad' },
        f === null ? '–' : { v: f.status + (f.failing.length ? ` (failing: ${f.failing.join(', ')})` : ''), cls: f.status === 'ready' && f.failing.length === 0 ? 'ok' : 'bad' },
        { v: r === null ? '–' : `${fmtBytes(r.bytesIn)}/s`, num: true, cls: 'broker-in' },
        { v: r === null ? '–' : `${fmtBytes(r.bytesOut)}/s`, num: true, cls: 'broker-out' },
        { v: fmtMs(r?.produceP99Ms), num: true },
        { v: fmtMs(r?.fetchP99Ms), num: true },
        { v: f?.loopDelayP99Ms == null ? '–' : `${f.loopDelayP99Ms.toFixed(1)} ms`, num: true, cls: 'loop-delay' },
      ];
    }), (i) => (down(overview.brokers[i]) ? 'bad' : undefined));
}

/**
 * The cluster's topics (/v1/cluster/topics): each partition's size, offsets and rate are those of
 * the broker in FROM (its leader when that answered); a broker that did not answer is named above.
 */
export function topicsPage(report) {
  const silent = (report.brokers ?? []).filter((b) => !b.reachable);
  const out = silent.map((b) => h('p', { class: 'bad', 'data-testid': 'silent-broker' }, `Broker ${b.id} did not answer (${b.error}): replicas only it hosts show no figures.`));
  if (report.topics.length === 0) return [...out, h('p', { class: 'muted' }, '(no topics)')];
  if (report.truncated) out.push(h('p', { class: 'bad' }, `Listing cut at the first partitions of ${report.totalPartitions}.`));
  for (const t of report.topics) {
    const under = t.partitions.filter((p) => p.isr.length < p.replicas.length).length;
    out.push(h('div', { class: 'block', 'data-topic': t.name },
      h('h3', {}, t.name, t.internal ? h('span', { class: 'muted' }, ' (internal)') : null,
        h('span', { class: under ? 'bad' : 'muted' }, ` · ${t.partitions.length} partitions${under ? ` · ${under} under-replicated` : ''}`)),
      table('partitions', ['PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'ISR', 'SIZE', 'START', 'END OFFSET', 'HW', 'RATE', 'FROM'], t.partitions.map((p) => [
        p.partition, p.leader < 0 ? { v: 'none', cls: 'bad' } : p.leader, p.leaderEpoch, ids(p.replicas), ids(p.isr),
        { v: fmtBytes(p.sizeBytes), num: true }, { v: fmtNum(p.logStartOffset), num: true },
        { v: fmtNum(p.logEndOffset), num: true, cls: 'end-offset' }, { v: fmtNum(p.highWatermark), num: true },
        { v: fmtRate(p.messagesPerSecond, ' msg/s'), num: true }, { v: p.figuresFrom ?? '–', cls: 'figures-from' },
      ]), (i) => (t.partitions[i].isr.length < t.partitions[i].replicas.length || t.partitions[i].leader < 0 ? 'bad' : undefined))));
  }
  return out;
}

function assignmentText(a) {
  if (a === null) return '(not the consumer protocol)';
  if (a.length === 0) return '(none)';
  return a.map((t) => `${t.topic}[${t.partitions.join(',')}]`).join(' ');
}

function lagSecondsText(p) {
  if (p.lagSeconds === null) return '–';
  return `${p.lagSecondsAtLeast ? '≥ ' : ''}${p.lagSeconds.toFixed(1)} s`;
}

export function groupsPage(report) {
  if (report.groups.length === 0) return [h('p', { class: 'muted' }, '(no consumer groups coordinated by this broker)')];
  const out = report.truncated ? [h('p', { class: 'bad' }, 'Listing cut: more groups than one answer describes.')] : [];
  for (const g of report.groups) {
    const lag = g.partitions.reduce((s, p) => s + (p.lag ?? 0), 0);
    out.push(h('div', { class: 'block', 'data-group': g.groupId },
      h('h3', {}, h('span', { 'data-testid': 'group-id' }, g.groupId),
        h('span', { class: 'muted' }, ` · ${g.groupType} · ${g.state} · ${g.members.length} members · lag `),
        h('span', { 'data-testid': 'group-lag' }, String(lag))),
      g.members.length === 0 ? h('p', { class: 'muted' }, '(no members)') : table('members', ['MEMBER', 'CLIENT ID', 'HOST', 'ASSIGNMENT'],
        g.members.map((m) => [m.memberId, m.clientId, m.clientHost, assignmentText(m.assignment)])),
      g.partitions.length === 0 ? h('p', { class: 'muted' }, '(no committed offsets)') : table('group-partitions',
        ['TOPIC', 'PARTITION', 'COMMITTED', 'END OFFSET', 'LAG', 'LAG (TIME)', 'MEMBER'],
        g.partitions.map((p) => [p.topic, p.partition, p.committedOffset, { v: fmtNum(p.logEndOffset), num: true },
          { v: fmtNum(p.lag), num: true, cls: 'lag' }, { v: lagSecondsText(p), num: true, cls: 'lag-seconds' }, p.memberId ?? '–']))));
  }
  return out;
}

/** `busy` maps a shard to its busy share of the last poll interval (0..1), when known. */
export function actorsPage(shards, busy) {
  const out = [table('shards', ['SHARD', 'PARTITIONS', 'HANDLED', 'BUSY', 'RING TO SHARD', 'RING TO MAIN', 'LOOP DELAY p99', 'LOOP DELAY MAX', 'PARKED FETCHES', 'OUTBOX', 'LAST ERROR'],
    shards.map((s) => [
      s.shard, s.actors.length, s.handled,
      { v: busy.has(s.shard) ? `${(busy.get(s.shard) * 100).toFixed(1)} %` : `${Math.round(s.busyMs)} ms`, num: true },
      { v: `${fmtBytes(s.toShard.usedBytes)} / ${fmtBytes(s.toShard.capacity)}`, num: true },
      { v: `${fmtBytes(s.toMain.usedBytes)} / ${fmtBytes(s.toMain.capacity)}`, num: true },
      { v: `${s.loopDelay.p99Ms.toFixed(1)} ms`, num: true }, { v: `${s.loopDelay.maxMs.toFixed(1)} ms`, num: true },
      s.parkedFetches, s.outboxDepth, s.lastError ?? '',
    ]))];
  for (const s of shards) {
    out.push(h('h3', {}, `Shard ${s.shard}`));
    if (s.actors.length === 0) { out.push(h('p', { class: 'muted' }, '(no partitions)')); continue; }
    out.push(table('actors', ['TOPIC', 'PARTITION', 'ROLE', 'EPOCH', 'START', 'END', 'HW', 'SIZE', 'BATCHES IN', 'FETCHES', 'PARKED', 'PENDING ACKS', 'ISR'],
      s.actors.map((a) => [a.topic, a.partition, a.role, a.leaderEpoch, a.logStartOffset, a.logEndOffset, a.highWatermark,
        { v: fmtBytes(a.sizeBytes), num: true }, a.batchesIn, a.fetches, a.parkedFetches, a.pendingAcks, ids(a.isr)])));
  }
  return out;
}

export function reassignmentsPage(list) {
  if (list.length === 0) return [h('p', { class: 'muted', 'data-testid': 'no-reassignments' }, '(no reassignments in progress)')];
  return [table('reassignments', ['TOPIC', 'PARTITION', 'REPLICAS', 'ADDING', 'REMOVING', 'ISR', 'PROGRESS'], list.map((r) => [
    r.topic, r.partition, ids(r.replicas), ids(r.addingReplicas), ids(r.removingReplicas), ids(r.isr),
    r.addingReplicas.length === 0 ? 'removing' : `${r.caughtUp}/${r.addingReplicas.length} in ISR`,
  ]))];
}

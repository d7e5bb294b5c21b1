// k6-summary (jslib): textSummary and jUnit over handleSummary's data, as
// k6's documentation describes them. textSummary lays the summary out as
// throttle's own end-of-test summary does (internal/script/k6out): the
// checks tree, then every metric alphabetically, dotted to one column.

const colors = { green: 32, red: 31, cyan: 36, faint: 2 };

function paint(on, color, s) {
  return on ? `\x1b[${colors[color]}m${s}\x1b[0m` : s;
}

// number: at most six decimals, trailing zeros cut.
function number(x) {
  let s = Number(x).toFixed(6);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
}

function twoDecimals(x) {
  return Number(x).toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

// duration: milliseconds in summaryTimeUnit, or in the unit that suits it.
function duration(ms, unit) {
  switch (unit) {
    case 's': return twoDecimals(ms / 1000) + 's';
    case 'ms': return twoDecimals(ms) + 'ms';
    case 'us': return twoDecimals(ms * 1000) + 'µs';
  }
  const a = Math.abs(ms);
  if (a === 0) return '0s';
  if (a < 0.001) return twoDecimals(ms * 1e6) + 'ns';
  if (a < 1) return twoDecimals(ms * 1000) + 'µs';
  if (a < 1000) return twoDecimals(ms) + 'ms';
  if (a < 60000) return twoDecimals(ms / 1000) + 's';
  const centis = Math.round(ms / 10);
  const h = Math.floor(centis / 360000);
  const m = Math.floor((centis % 360000) / 6000);
  const s = number((centis % 6000) / 100);
  return (h > 0 ? `${h}h${m}m` : `${m}m`) + `${s}s`;
}

// bytes: SI units, as k6 prints data: 600 B, 81 kB, 1.3 MB.
function bytes(b) {
  if (b < 1000) return number(Math.round(b)) + ' B';
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  const e = Math.min(Math.floor(Math.log10(b) / 3), units.length);
  const v = b / Math.pow(1000, e);
  return (v < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ' + units[e - 1];
}

function metricValue(m, options, color) {
  const unit = options.summaryTimeUnit || '';
  const fmt = (x) => {
    if (m.contains === 'time') return duration(x, unit);
    if (m.contains === 'data') return bytes(x);
    return number(x);
  };
  const v = m.values || {};
  const c = (s) => paint(color, 'cyan', s);
  switch (m.type) {
    case 'counter':
      return `${c(fmt(v.count))} ${paint(color, 'cyan', fmt(v.rate) + '/s')}`;
    case 'gauge':
      return `${c(fmt(v.value))} min=${c(fmt(v.min))} max=${c(fmt(v.max))}`;
    case 'rate':
      return `${c((100 * v.rate).toFixed(2) + '%')} ✓ ${v.passes} ✗ ${v.fails}`;
  }
  const stats = options.summaryTrendStats || Object.keys(v);
  return stats
    .filter((s) => s in v)
    .map((s) => `${s}=${c(s === 'count' ? number(v[s]) : fmt(v[s]))}`)
    .join(' ');
}

function groupLines(g, indent, color, out) {
  const pad = indent;
  for (const ch of g.checks || []) {
    if (ch.fails === 0) {
      out.push(`${pad}${paint(color, 'green', '✓ ' + ch.name)}`);
      continue;
    }
    const share = Math.round((100 * ch.passes) / (ch.passes + ch.fails));
    out.push(`${pad}${paint(color, 'red', '✗ ' + ch.name)}`);
    out.push(`${pad} ${paint(color, 'red', `↳  ${share}% — ✓ ${ch.passes} / ✗ ${ch.fails}`)}`);
  }
  if ((g.checks || []).length > 0) out.push('');
  for (const sub of g.groups || []) {
    out.push(`${pad}█ ${sub.name}`, '');
    groupLines(sub, pad + '  ', color, out);
  }
}

export function textSummary(data, options = {}) {
  const indent = options.indent === undefined ? ' ' : String(options.indent);
  const color = options.enableColors === undefined ? false : !!options.enableColors;
  const opts = data.options || {};
  const out = [''];
  if (data.root_group) groupLines(data.root_group, indent + '    ', color, out);

  const lines = [];
  let width = 0;
  for (const [name, m] of Object.entries(data.metrics || {})) {
    const l = { base: name, label: name, sub: 0, mark: ' ' };
    const brace = name.indexOf('{');
    if (brace > 0) {
      l.base = name.slice(0, brace);
      l.sub = 2;
      l.label = '{ ' + name.slice(brace + 1).replace(/}$/, '').split(',').join(', ') + ' }';
    }
    for (const th of Object.values(m.thresholds || {})) {
      if (l.mark === ' ') l.mark = paint(color, 'green', '✓');
      if (!th.ok) l.mark = paint(color, 'red', '✗');
    }
    l.value = metricValue(m, opts, color);
    width = Math.max(width, l.sub + l.label.length);
    lines.push(l);
  }
  lines.sort((a, b) => (a.base !== b.base ? (a.base < b.base ? -1 : 1) : a.sub - b.sub));
  for (const l of lines) {
    const dots = paint(color, 'faint', '.'.repeat(width + 3 - l.sub - l.label.length));
    out.push(`${indent}  ${l.mark} ${' '.repeat(l.sub)}${l.label}${dots}: ${l.value}`);
  }
  return out.join('\n') + '\n';
}

function escapeXML(s) {
  return String(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

// jUnit: every threshold a test case, a crossed one failed.
export function jUnit(data, options = {}) {
  const name = options.name || 'k6 thresholds';
  const cases = [];
  let failures = 0;
  for (const [metric, m] of Object.entries(data.metrics || {})) {
    for (const [source, th] of Object.entries(m.thresholds || {})) {
      const caseName = escapeXML(`${metric} - ${source}`);
      if (th.ok) {
        cases.push(`<testcase name="${caseName}" />`);
      } else {
        failures++;
        cases.push(`<testcase name="${caseName}"><failure message="failed" /></testcase>`);
      }
    }
  }
  return (
    '<?xml version="1.0"?>\n' +
    `<testsuites tests="${cases.length}" failures="${failures}">\n` +
    `<testsuite name="${escapeXML(name)}" tests="${cases.length}" failures="${failures}">` +
    cases.join('\n') +
    '\n</testsuite >\n</testsuites >'
  );
}

// Charts as server-rendered SVG (no script, no library): each has a title and a description for assistive
// technology (role="img"), a visible caption, and its numbers in a table under "Data" as the text alternative.
import { html, raw, type Raw } from "@pss/html";
import { formatNumber } from "./format.ts";

let sequence = 0;
const nextId = (prefix: string) => `${prefix}-${++sequence}`;

export interface Bar {
  label: string;
  value: number;
  /** Fill colour (default the accent). */
  color?: string;
}

const ACCENT = "#0b5cad";

/** Horizontal bars, one per row, with the value written beside each. `narrow`: for a side column. */
export function barChart(opts: { title: string; caption: string; bars: Bar[]; unit: string; narrow?: boolean }): Raw {
  const id = nextId("bars");
  const width = opts.narrow ? 360 : 640;
  const labelWidth = opts.narrow ? 80 : 190;
  const rowHeight = 26;
  const max = Math.max(1, ...opts.bars.map((b) => b.value));
  const height = Math.max(rowHeight, opts.bars.length * rowHeight) + 8;
  const plot = width - labelWidth - 70;
  const rows = opts.bars.map((b, i) => {
    const y = 4 + i * rowHeight;
    const w = b.value === 0 ? 0 : Math.max(2, Math.round((plot * b.value) / max));
    return html`<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end" font-size="13" fill="#1d2733">${b.label}</text><rect x="${labelWidth}" y="${y + 4}" width="${w}" height="${rowHeight - 10}" fill="${b.color ?? ACCENT}" rx="2"></rect><text x="${labelWidth + w + 6}" y="${y + 16}" font-size="13" fill="#1d2733">${formatNumber(b.value)}</text>`;
  });
  const description = opts.bars.map((b) => `${b.label}: ${formatNumber(b.value)} ${opts.unit}`).join("; ");
  return html`<figure class="chart"><svg role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><title id="${id}-t">${opts.title}</title><desc id="${id}-d">${description || "No data"}</desc>${rows}</svg><figcaption>${opts.caption}</figcaption>${dataTable(
    "",
    [opts.unit],
    opts.bars.map((b) => [b.label, [b.value]]),
  )}</figure>`;
}

export interface Series {
  name: string;
  color: string;
  values: number[];
}

/** One line per series over days (oldest first), with the days' dates under the axis every `labelEvery` days. */
export function dailyChart(opts: {
  title: string;
  caption: string;
  days: string[];
  series: Series[];
  unit: string;
}): Raw {
  const id = nextId("daily");
  const width = 640;
  const height = 220;
  const left = 44;
  const right = 12;
  const top = 12;
  const bottom = 36;
  const max = Math.max(1, ...opts.series.flatMap((s) => s.values));
  const n = opts.days.length;
  const x = (i: number) => left + (n <= 1 ? 0 : ((width - left - right) * i) / (n - 1));
  const y = (v: number) => top + (height - top - bottom) * (1 - v / max);
  const ticks = [0, Math.round(max / 2), max].filter((v, i, a) => a.indexOf(v) === i);
  const labelEvery = n > 14 ? 7 : n > 7 ? 2 : 1;
  // The last day is always labelled; a regular label too close before it gives way.
  const labelled = (i: number) =>
    i === n - 1 || (i % labelEvery === 0 && (n - 1 - i >= Math.ceil(labelEvery / 2) || labelEvery === 1));
  const grid = ticks.map(
    (v) =>
      html`<line x1="${left}" x2="${width - right}" y1="${y(v)}" y2="${y(v)}" stroke="#d3d9e0"></line><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#4f5b68">${formatNumber(v)}</text>`,
  );
  const labels = opts.days.map((d, i) =>
    labelled(i)
      ? html`<text x="${x(i)}" y="${height - 14}" text-anchor="middle" font-size="11" fill="#4f5b68">${d.slice(5)}</text>`
      : "",
  );
  const lines = opts.series.map((s) => {
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    return html`<polyline fill="none" stroke="${s.color}" stroke-width="2.5" points="${points}"></polyline>`;
  });
  const totals = opts.series.map((s) => `${s.name}: ${formatNumber(s.values.reduce((a, b) => a + b, 0))} ${opts.unit}`);
  const description = `${opts.days[0] ?? ""} to ${opts.days.at(-1) ?? ""}. Totals: ${totals.join("; ")}`;
  return html`<figure class="chart"><svg role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><title id="${id}-t">${opts.title}</title><desc id="${id}-d">${description}</desc>${grid}${labels}${lines}</svg><ul class="legend">${opts.series.map((s) => html`<li><span class="swatch" style="background:${raw(s.color)}"></span>${s.name}</li>`)}</ul><figcaption>${opts.caption}</figcaption>${dataTable(
    "Day (UTC)",
    opts.series.map((s) => s.name),
    opts.days.map((d, i) => [d, opts.series.map((s) => s.values[i] ?? 0)]),
  )}</figure>`;
}

/** The chart's numbers, collapsed under "Data". */
function dataTable(rowHeader: string, columns: string[], rows: [string, number[]][]): Raw {
  return html`<details><summary>Data</summary><div class="table-wrap"><table><thead><tr><th scope="col">${rowHeader || "Item"}</th>${columns.map((c) => html`<th scope="col" class="num">${c}</th>`)}</tr></thead><tbody>${rows.map(([label, values]) => html`<tr><th scope="row">${label}</th>${values.map((v) => html`<td class="num">${formatNumber(v)}</td>`)}</tr>`)}</tbody></table></div></details>`;
}

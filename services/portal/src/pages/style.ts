// The portal's one stylesheet, inline (no extra request; the CSP allows inline styles, never scripts). Colours meet
// WCAG AA contrast on their backgrounds (axe-core checks every page in the browser test).
export const STYLE = `
  :root { color-scheme: light; --ink: #1d2733; --muted: #4f5b68; --line: #d3d9e0; --accent: #0b5cad; --bg: #f3f5f8; --paper: #fff;
          --good: #1b6e3a; --warn: #8a5300; --bad: #b3261e; --info: #34516b; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
  a { color: var(--accent); }
  a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  .skip { position: absolute; left: -10000px; top: 0; background: var(--paper); padding: .5rem 1rem; z-index: 1; }
  .skip:focus { left: 1rem; }
  header.top { background: #12324f; color: #fff; }
  header.top .bar { max-width: 76rem; margin: 0 auto; padding: .6rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center; }
  header.top a { color: #fff; }
  .brand { font-weight: 700; text-decoration: none; margin-right: auto; }
  nav.main ul, nav.modes ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem .9rem; }
  nav.main a[aria-current=page] { font-weight: 700; text-decoration-thickness: 3px; }
  nav.modes a { display: inline-block; padding: .1rem .6rem; border: 1px solid #fff; border-radius: 999px; text-decoration: none; }
  nav.modes a[aria-current=true] { background: #fff; color: #12324f; font-weight: 700; }
  header.top form { margin: 0; }
  header.top button { background: transparent; color: #fff; border: 1px solid #fff; padding: .2rem .7rem; }
  .test-banner { background: #fff4d6; color: #5c3d00; text-align: center; padding: .35rem 1rem; border-bottom: 1px solid #e3c77a; }
  main { max-width: 76rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; background: var(--paper); min-height: 70vh; }
  h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 .75rem; }
  h2 { font-size: 1.15rem; margin: 1.8rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
  h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
  .muted { color: var(--muted); }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem 1.5rem; }
  .card { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
  .figure { font-size: 1.6rem; font-weight: 700; margin: 0; }
  h2.card-title { margin: 0; border: 0; padding: 0; font-size: .95rem; color: var(--muted); }
  table { border-collapse: collapse; width: 100%; font-size: .92rem; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-weight: 600; background: var(--bg); }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  .table-wrap { overflow-x: auto; }
  .badge { display: inline-block; padding: .05rem .55rem; border-radius: 999px; font-weight: 600; font-size: .82rem; border: 1px solid currentColor; white-space: nowrap; }
  .good { color: var(--good); } .warn { color: var(--warn); } .bad { color: var(--bad); } .info { color: var(--info); }
  ul.plain { list-style: none; padding: 0; margin: 0; }
  ol.steps { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
  ol.steps li { margin: 0 0 .5rem; padding-left: .8rem; }
  ol.steps li p { margin: .1rem 0; }
  ol.timeline { list-style: none; padding: 0; margin: 0; }
  ol.timeline > li { border-left: 3px solid var(--line); padding: 0 0 .8rem .8rem; }
  .photos { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .75rem; }
  .photos li { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem; }
  .photos img { width: 100%; aspect-ratio: 4 / 3; object-fit: cover; border-radius: .3rem; display: block; background: var(--bg); }
  .no-photo { aspect-ratio: 4 / 3; display: flex; align-items: center; justify-content: center; background: var(--bg); border-radius: .3rem; margin: 0; }
  form.filters { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: flex-end; margin: 0 0 1rem; }
  form.filters .field { display: flex; flex-direction: column; gap: .2rem; }
  label { font-weight: 600; font-size: .9rem; }
  input, select, button { font: inherit; }
  input[type=text], input[type=email], input[type=search], input[type=date], select { padding: .4rem .5rem; border: 1px solid #76818d; border-radius: .3rem; background: #fff; color: var(--ink); min-width: 10rem; }
  button { background: var(--accent); color: #fff; border: 0; border-radius: .3rem; padding: .45rem 1.1rem; font-weight: 600; cursor: pointer; }
  button.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
  form.inline { display: inline; margin: 0; }
  .notice { border: 1px solid var(--line); border-left: 4px solid var(--info); padding: .6rem .9rem; margin: 0 0 1rem; background: #f7f9fb; }
  .notice.good { border-left-color: var(--good); } .notice.bad { border-left-color: var(--bad); } .notice.warn { border-left-color: var(--warn); }
  .notice.good, .notice.bad, .notice.warn { color: var(--ink); }
  .secret { font-family: ui-monospace, monospace; font-size: 1rem; background: var(--bg); padding: .4rem .6rem; border-radius: .3rem; display: inline-block; }
  pre { white-space: pre-wrap; background: var(--bg); padding: .5rem .7rem; border-radius: .3rem; font-size: .85rem; margin: .3rem 0; }
  code { font-family: ui-monospace, monospace; font-size: .9em; }
  figure.chart { margin: .5rem 0 1rem; }
  figure.chart svg { width: 100%; max-width: 46rem; height: auto; display: block; }
  figure.chart figcaption { font-size: .9rem; color: var(--muted); }
  details summary { cursor: pointer; color: var(--accent); }
  .pager { display: flex; gap: 1rem; margin: 1rem 0; }
  .legend { display: flex; flex-wrap: wrap; gap: .2rem 1rem; font-size: .88rem; margin: .2rem 0 0; padding: 0; list-style: none; }
  .legend span.swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; border-radius: 2px; }
  .sign-in { max-width: 28rem; margin: 2rem auto; }
  .sign-in .field { display: flex; flex-direction: column; gap: .25rem; margin: 0 0 1rem; }
  .sign-in input { width: 100%; }
  @media (min-width: 48rem) { .two { display: grid; grid-template-columns: 2fr 1fr; gap: 1.5rem; } }
`;

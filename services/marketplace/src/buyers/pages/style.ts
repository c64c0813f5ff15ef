// The pages' one stylesheet, inline (no extra request; CSP allows inline styles, never scripts). Mobile first:
// everything fits 375 px; wider screens get columns.
export const STYLE = `
  :root { color-scheme: light; --ink: #1d2733; --muted: #4f5b68; --line: #d3d9e0; --accent: #0b5cad; --bad: #b3261e; --paper: #fff; --bg: #f3f5f8; }
  * { box-sizing: border-box; }
  html { -webkit-text-size-adjust: 100%; }
  body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
  a { color: var(--accent); }
  a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  .skip { position: absolute; left: -10000px; top: 0; background: var(--paper); padding: .5rem 1rem; z-index: 1; }
  .skip:focus { left: 1rem; }
  header.site, footer.site { background: #12324f; color: #fff; }
  header.site .bar, footer.site .bar { max-width: 64rem; margin: 0 auto; padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; justify-content: space-between; }
  header.site a, footer.site a { color: #fff; }
  .brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; }
  header.site nav ul { list-style: none; margin: 0; padding: 0; display: flex; gap: 1rem; }
  main { max-width: 64rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; background: var(--paper); min-height: 70vh; }
  footer.site { font-size: .9rem; }
  h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .5rem; }
  h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
  h3 { font-size: 1.05rem; margin: .5rem 0 .25rem; line-height: 1.3; }
  .muted { color: var(--muted); }
  .badge { display: inline-block; padding: .15rem .6rem; border-radius: 999px; background: var(--bad); color: #fff; font-weight: 600; font-size: .85rem; }
  .badge.reduced { background: #1d6b3a; }
  .search-body { display: grid; gap: 1.5rem; }
  @media (min-width: 64rem) { .search-body { grid-template-columns: 14rem 1fr; align-items: start; } }
  .facets h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
  .facets h3 { font-size: .95rem; margin: .75rem 0 .25rem; }
  .facets ul { list-style: none; margin: 0; padding: 0; }
  .facets li { margin: .15rem 0; }
  .small { font-size: .85rem; }
  .price { font-size: 1.4rem; font-weight: 700; margin: .5rem 0; }
  img { max-width: 100%; height: auto; }
  .gallery { margin: 1rem 0; }
  .gallery .cover img { width: 100%; border-radius: .4rem; display: block; }
  .gallery ul { list-style: none; padding: 0; margin: .5rem 0 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .5rem; }
  .gallery ul img { width: 100%; border-radius: .3rem; display: block; }
  dl.facts { display: grid; grid-template-columns: 1fr; gap: .1rem 1.2rem; margin: 0; }
  dl.facts dt { color: var(--muted); font-size: .9rem; margin-top: .4rem; }
  dl.facts dd { margin: 0; }
  .broker-card { display: flex; gap: 1rem; align-items: center; }
  .avatar { width: 96px; height: 96px; border-radius: 50%; object-fit: cover; flex: none; }
  .cards { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 1rem; }
  .cards > li { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; display: flex; flex-direction: column; }
  .cards img { width: 100%; aspect-ratio: 4 / 3; object-fit: cover; border-radius: .4rem; display: block; background: var(--bg); }
  .cards p { margin: .2rem 0; }
  .cards .no-photo { aspect-ratio: 4 / 3; margin: 0; display: flex; align-items: center; justify-content: center; border-radius: .4rem; background: var(--bg); color: var(--muted); }
  .cards .figures { font-size: .9rem; }
  .description p { margin: 0 0 1rem; white-space: pre-line; }
  form .field { display: flex; flex-direction: column; gap: .25rem; margin: 0 0 .9rem; }
  form .field p { margin: 0; }
  label, legend { font-weight: 600; }
  input, select, textarea, button { font: inherit; }
  input[type=text], input[type=search], input[type=email], input[type=tel], input:not([type]), select, textarea { width: 100%; padding: .55rem .6rem; border: 1px solid #76818d; border-radius: .3rem; background: #fff; color: var(--ink); }
  textarea { min-height: 8rem; resize: vertical; }
  button { background: var(--accent); color: #fff; border: 0; border-radius: .3rem; padding: .65rem 1.4rem; font-weight: 600; cursor: pointer; }
  fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: 0 0 .9rem; padding: .6rem .8rem; min-width: 0; }
  fieldset.range .pair { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; }
  fieldset.range label { font-weight: 400; }
  .check { flex-direction: row !important; align-items: center; gap: .5rem !important; }
  .check input { width: 1.2rem; height: 1.2rem; }
  .search-form .filters { display: grid; grid-template-columns: 1fr; gap: 0 1rem; }
  .search-form .query { display: flex; gap: .5rem; align-items: flex-end; }
  .search-form .query .field { flex: 1; margin: 0; }
  details.more { margin: .9rem 0; }
  details.more summary { cursor: pointer; font-weight: 600; color: var(--accent); padding: .3rem 0; }
  [aria-invalid=true] { border-color: var(--bad) !important; border-width: 2px !important; }
  .error { color: var(--bad); font-weight: 600; margin: 0; }
  .error-summary { border: 3px solid var(--bad); border-radius: .4rem; padding: .5rem 1rem; margin: 1rem 0; }
  .error-summary h2, .notice h2 { margin-top: .3rem; border: 0; }
  .notice { border: 2px solid var(--accent); border-radius: .4rem; padding: .5rem 1rem; margin: 1rem 0; }
  .hp { position: absolute; left: -10000px; width: 1px; height: 1px; overflow: hidden; }
  .pager { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center; justify-content: space-between; margin: 1.5rem 0 0; }
  .inquiry { max-width: 36rem; }
  @media (min-width: 40rem) {
    h1 { font-size: 1.9rem; }
    dl.facts { grid-template-columns: max-content 1fr; }
    dl.facts dt { margin-top: 0; }
    .search-form .filters { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  }
  @media (min-width: 60rem) {
    .search-form .filters { grid-template-columns: repeat(3, minmax(0, 1fr)); }
    .listing-columns { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 2rem; }
  }
`;

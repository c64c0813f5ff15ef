// The public broker profile behind serviceProfileUrl: the same public data as GET /v1/brokers/{id}.
import type { PublicBroker } from "@pss/contracts";
import { excerpt } from "../public-views.ts";
import { listingCards } from "./cards.ts";
import { html, page, picture, shareImageUrl } from "./html.ts";

const areaName = (a: PublicBroker["serviceAreas"][number]) =>
  [a.city, a.county ? `${a.county} County` : null, a.state, a.country].filter(Boolean).join(", ");
const licenseName = (l: PublicBroker["licenses"][number]) =>
  [l.licenseNumber, [l.state, l.country].filter(Boolean).join(", ")].filter(Boolean).join(" – ");

export function renderBrokerPage(b: PublicBroker): Response {
  const areas = b.serviceAreas.map(areaName).filter(Boolean);
  const description =
    excerpt(b.bio, 160) ??
    `${b.name}, business broker${areas.length ? ` serving ${areas.slice(0, 3).join("; ")}` : ""}.`;
  const body = html`<article>
<header class="broker-card">
${b.avatar ? picture(b.avatar, `Photo of ${b.name}`, { sizes: "96px", className: "avatar", eager: true }) : ""}
<div><h1>${b.name}</h1><p class="muted">Business broker</p></div>
</header>
${b.bio ? html`<section aria-labelledby="about-heading" class="description"><h2 id="about-heading">About</h2>${b.bio.split(/\n{2,}/).map((p) => html`<p>${p}</p>`)}</section>` : ""}
${
  b.website || b.linkedInUrl
    ? html`<section aria-labelledby="links-heading"><h2 id="links-heading">Links</h2><ul>
${b.website ? html`<li><a href="${b.website}" rel="nofollow noopener ugc">Website</a></li>` : ""}
${b.linkedInUrl ? html`<li><a href="${b.linkedInUrl}" rel="nofollow noopener ugc">LinkedIn profile</a></li>` : ""}
</ul></section>`
    : ""
}
${b.licenses.length ? html`<section aria-labelledby="licenses-heading"><h2 id="licenses-heading">Licenses</h2><ul>${b.licenses.map((l) => html`<li>${licenseName(l)}</li>`)}</ul></section>` : ""}
${areas.length ? html`<section aria-labelledby="areas-heading"><h2 id="areas-heading">Service areas</h2><ul>${areas.map((a) => html`<li>${a}</li>`)}</ul></section>` : ""}
<section aria-labelledby="listings-heading"><h2 id="listings-heading">Businesses for sale</h2>
${b.listings.length ? listingCards(b.listings) : html`<p class="muted">No businesses on the market right now.</p>`}
</section>
</article>`;
  return page(
    {
      title: `${b.name} – Business broker`,
      description,
      canonicalUrl: b.serviceProfileUrl,
      type: "profile",
      imageUrl: b.avatar ? shareImageUrl(b.avatar.variants) : null,
      imageAlt: `Photo of ${b.name}`,
    },
    body,
  );
}

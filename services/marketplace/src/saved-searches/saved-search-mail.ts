// The e-mails of saved searches, composed here (the leads service only delivers them): the confirmation (double
// opt-in), the daily digest of new and price-reduced listings, and the notice that an address has as many searches as
// it may. Each carries the search's one-click unsubscribe link (List-Unsubscribe with List-Unsubscribe-Post, RFC 8058,
// set by the sender) and says it in its text. Text and HTML, the HTML escaped by the pages' template.
import type { PublicListingSummary } from "@pss/contracts";
import { formatMoney, headlineOf, html, placeOf, renderToString, SITE_NAME } from "../buyers/pages/html.ts";
import type { ComposedMail } from "./saved-search-repository.ts";

export interface SearchLinks {
  /** The search page with the saved filters. */
  searchUrl: string;
  unsubscribeUrl: string;
}

export const confirmUrl = (base: string, token: string) => `${base}/saved-searches/confirm?token=${token}`;
export const unsubscribeUrl = (base: string, token: string) => `${base}/saved-searches/unsubscribe?token=${token}`;

const layout = (body: ReturnType<typeof html>, links: SearchLinks) =>
  renderToString(html`<!doctype html><html lang="en"><body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1d2733">
${body}
<hr>
<p style="color: #4f5b68; font-size: 14px">You get this because this address saved a search on ${SITE_NAME}. <a href="${links.unsubscribeUrl}">Unsubscribe from this search</a> (one click, nothing else is needed).</p>
</body></html>`);

const footer = (links: SearchLinks) =>
  `\n--\nYou get this because this address saved a search on ${SITE_NAME}.\nUnsubscribe from this search (one click): ${links.unsubscribeUrl}\n`;

export function confirmationMail(args: {
  to: string;
  label: string;
  confirm: string;
  links: SearchLinks;
  intervalText: string;
}): ComposedMail {
  const { links } = args;
  return {
    kind: "confirmation",
    recipient: args.to,
    subject: `Confirm your saved search: ${args.label}`,
    text: `Please confirm that you want e-mail alerts for this search:\n\n  ${args.label}\n  ${links.searchUrl}\n\nConfirm: ${args.confirm}\n\nOnce confirmed you get ${args.intervalText} e-mail with the businesses newly listed or reduced in price that match it. Did not ask for this? Ignore this e-mail: nothing more will be sent, and the address is deleted within a week.\n${footer(links)}`,
    html: layout(
      html`<p>Please confirm that you want e-mail alerts for this search:</p>
<p><a href="${links.searchUrl}"><strong>${args.label}</strong></a></p>
<p><a href="${args.confirm}" style="display: inline-block; padding: 10px 16px; background: #0b5cad; color: #fff; text-decoration: none; border-radius: 6px">Confirm the alerts</a></p>
<p>Once confirmed you get ${args.intervalText} e-mail with the businesses newly listed or reduced in price that match it. Did not ask for this? Ignore this e-mail: nothing more will be sent, and the address is deleted within a week.</p>`,
      links,
    ),
    unsubscribeUrl: links.unsubscribeUrl,
  };
}

/** One line of a digest: what it is, where, the price, and why it is in the digest. */
function summaryLine(l: PublicListingSummary, reduced: boolean): string {
  const price =
    typeof l.financials.askingPrice === "number" ? formatMoney(l.financials.askingPrice) : "Price on request";
  return `${headlineOf(l)} (${l.businessType}, ${placeOf(l.location)}): ${price}${reduced ? " — price reduced" : ""}`;
}

export function digestMail(args: {
  to: string;
  label: string;
  listings: { listing: PublicListingSummary; reduced: boolean }[];
  total: number;
  links: SearchLinks;
}): ComposedMail {
  const { links } = args;
  const count = `${args.total} ${args.total === 1 ? "business" : "businesses"}`;
  const more = args.total > args.listings.length ? args.total - args.listings.length : 0;
  return {
    kind: "digest",
    recipient: args.to,
    subject: `${count} new or reduced: ${args.label}`,
    text: `New or reduced in price since the last e-mail, matching your saved search "${args.label}":\n\n${args.listings
      .map(({ listing, reduced }) => `- ${summaryLine(listing, reduced)}\n  ${listing.serviceListingUrl}`)
      .join(
        "\n",
      )}\n${more ? `\n…and ${more} more: ${links.searchUrl}\n` : ""}\nThe whole search: ${links.searchUrl}\n${footer(links)}`,
    html: layout(
      html`<p>New or reduced in price since the last e-mail, matching your saved search <a href="${links.searchUrl}"><strong>${args.label}</strong></a>:</p>
<ul>${args.listings.map(({ listing, reduced }) => html`<li><a href="${listing.serviceListingUrl}">${headlineOf(listing)}</a> (${listing.businessType}, ${placeOf(listing.location)}): ${typeof listing.financials.askingPrice === "number" ? formatMoney(listing.financials.askingPrice) : "Price on request"}${reduced ? html` <strong>price reduced</strong>` : ""}</li>`)}</ul>
${more ? html`<p>…and ${more} more: <a href="${links.searchUrl}">see them all</a>.</p>` : ""}`,
      links,
    ),
    unsubscribeUrl: links.unsubscribeUrl,
  };
}

export function fullNoticeMail(args: { to: string; count: number; links: SearchLinks }): ComposedMail {
  const { links } = args;
  return {
    kind: "notice",
    recipient: args.to,
    subject: "Your saved searches are full",
    text: `Someone (perhaps you) tried to save another search for this address, but it already has ${args.count} saved searches, as many as one address may. Nothing was saved. To make room, unsubscribe from one through the link in its e-mails.\n${footer(links)}`,
    html: layout(
      html`<p>Someone (perhaps you) tried to save another search for this address, but it already has ${args.count} saved searches, as many as one address may. Nothing was saved. To make room, unsubscribe from one through the link in its e-mails.</p>`,
      links,
    ),
    unsubscribeUrl: links.unsubscribeUrl,
  };
}

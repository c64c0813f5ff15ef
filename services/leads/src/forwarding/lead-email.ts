// The e-mail a broker receives for a lead: plain text and HTML (escaped), reply-to the buyer, and a
// Message-ID derived from the lead ID so that even a repeated send is recognisably the same message.
import { escapeHtml } from "@pss/html";

export interface LeadForEmail {
  leadId: string;
  listingId: string;
  listingTitle: string | null;
  buyerName: string;
  buyerEmail: string;
  buyerPhone: string | null;
  message: string;
  recipient: string;
}

export interface LeadEmail {
  to: string;
  replyTo: { name: string; address: string };
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
}

/** The shared escaping of @pss/html (the buyers' pages and the portal use it too). */
export { escapeHtml } from "@pss/html";

/** One line, no control characters: a partner's title must not be able to break the header. */
function headerText(value: string, max = 150): string {
  // eslint-disable-next-line no-control-regex
  const flat = value
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function leadMessageId(leadId: string, domain: string): string {
  return `<lead-${leadId}@${domain}>`;
}

export function composeLeadEmail(
  lead: LeadForEmail,
  opts: { publicBaseUrl: string; messageIdDomain: string },
): LeadEmail {
  const url = `${opts.publicBaseUrl}/listings/${lead.listingId}`;
  const title = lead.listingTitle?.trim() || `Listing ${lead.listingId}`;
  const contact: [string, string][] = [
    ["Name", lead.buyerName],
    ["E-mail", lead.buyerEmail],
    ...(lead.buyerPhone ? [["Phone", lead.buyerPhone] as [string, string]] : []),
  ];
  const text = [
    "A buyer sent an inquiry about your listing.",
    "",
    `Listing: ${title}`,
    url,
    "",
    ...contact.map(([k, v]) => `${k}: ${v}`),
    "",
    "Message:",
    lead.message,
    "",
    "Reply to this e-mail to answer the buyer directly.",
    `Lead ID: ${lead.leadId}`,
  ].join("\n");
  const html = [
    "<!doctype html>",
    '<html><body style="font-family: sans-serif; line-height: 1.4">',
    "<p>A buyer sent an inquiry about your listing.</p>",
    `<p><strong>Listing:</strong> <a href="${escapeHtml(url)}">${escapeHtml(title)}</a><br>${escapeHtml(url)}</p>`,
    `<p>${contact.map(([k, v]) => `<strong>${k}:</strong> ${escapeHtml(v)}`).join("<br>")}</p>`,
    `<p><strong>Message:</strong></p><p style="white-space: pre-wrap">${escapeHtml(lead.message)}</p>`,
    `<p>Reply to this e-mail to answer the buyer directly.<br><small>Lead ID: ${escapeHtml(lead.leadId)}</small></p>`,
    "</body></html>",
  ].join("\n");
  return {
    to: lead.recipient,
    replyTo: { name: headerText(lead.buyerName, 200), address: lead.buyerEmail },
    subject: headerText(`New inquiry: ${title}`),
    text,
    html,
    messageId: leadMessageId(lead.leadId, opts.messageIdDomain),
    headers: { "X-PSS-Lead-Id": lead.leadId },
  };
}

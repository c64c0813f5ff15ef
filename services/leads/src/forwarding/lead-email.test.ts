import { describe, expect, test } from "bun:test";
import { composeLeadEmail, escapeHtml } from "./lead-email.ts";

const lead = {
  leadId: "0190a6f2-3b4c-7d5e-8f60-123456789abc",
  listingId: "42",
  listingTitle: "Taqueria <downtown> & bar",
  buyerName: 'Ann "Buyer" O\'Neil',
  buyerEmail: "ann@example.com",
  buyerPhone: "+1 512 555 0100",
  message: "Hello!\n<script>alert(1)</script>\nIs the lease renewable?",
  recipient: "leads@crm.example.com",
};

describe("composeLeadEmail", () => {
  const mail = composeLeadEmail(lead, { publicBaseUrl: "https://market.example", messageIdDomain: "market.example" });

  test("goes to the recipient, replies go to the buyer, and the Message-ID is derived from the lead ID", () => {
    expect(mail.to).toBe("leads@crm.example.com");
    expect(mail.replyTo).toEqual({ name: 'Ann "Buyer" O\'Neil', address: "ann@example.com" });
    expect(mail.messageId).toBe("<lead-0190a6f2-3b4c-7d5e-8f60-123456789abc@market.example>");
    expect(composeLeadEmail(lead, { publicBaseUrl: "x", messageIdDomain: "market.example" }).messageId).toBe(
      mail.messageId,
    );
  });

  test("the text part carries the listing title, public URL, contact details and the message as written", () => {
    expect(mail.subject).toBe("New inquiry: Taqueria <downtown> & bar");
    expect(mail.text).toContain("https://market.example/listings/42");
    expect(mail.text).toContain("Phone: +1 512 555 0100");
    expect(mail.text).toContain(lead.message);
  });

  test("the HTML part escapes everything that came from buyers or partners", () => {
    expect(mail.html).not.toContain("<script>");
    expect(mail.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(mail.html).toContain("Taqueria &lt;downtown&gt; &amp; bar");
    expect(mail.html).toContain("Ann &quot;Buyer&quot; O&#39;Neil");
    expect(mail.html).toContain('<a href="https://market.example/listings/42">');
  });

  test("a title with line breaks cannot inject headers; a missing title falls back to the listing ID; no phone, no phone line", () => {
    const m = composeLeadEmail(
      { ...lead, listingTitle: "Nice\r\nBcc: victim@example.com", buyerPhone: null },
      { publicBaseUrl: "https://m.example", messageIdDomain: "m.example" },
    );
    expect(m.subject).toBe("New inquiry: Nice Bcc: victim@example.com");
    expect(m.text).not.toContain("Phone:");
    expect(
      composeLeadEmail(
        { ...lead, listingTitle: null },
        { publicBaseUrl: "https://m.example", messageIdDomain: "m.example" },
      ).subject,
    ).toBe("New inquiry: Listing 42");
  });

  test("escapeHtml covers the five special characters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});

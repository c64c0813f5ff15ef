import { describe, expect, test } from "bun:test";
import { removeContactDetails, rewriteDescription } from "./description-rewrite.ts";

describe("rewriteDescription", () => {
  test("removes e-mail addresses, phone numbers and web addresses, with the label that introduced them", () => {
    const out = rewriteDescription(
      "Great bakery. Call us at (512) 555-0100 or email owner@bakery-austin.com for details. See www.bakery-austin.com and https://bakery.example.com/menu. Text +44 20 7946 0958!",
    );
    expect(out).not.toMatch(/555|0100|@|bakery-austin|example\.com|7946|www|https?:/);
    expect(out).toBe("Great bakery. For details.");
  });

  test("catches the common phone spellings and obfuscated e-mails", () => {
    for (const contact of [
      "512-555-0100",
      "512.555.0100",
      "5125550100",
      "+15125550100",
      "1 512 555 0100",
      "555-0100",
      "jane [at] example [dot] com",
      "jane(at)example.com",
      "bakery.com",
    ]) {
      const out = rewriteDescription(`Ask the owner ${contact} anytime.`);
      expect(out).toBe("Ask the owner anytime.");
    }
  });

  test("keeps money, years, percentages and other figures that are not phone numbers", () => {
    const text =
      "Asking $1,200,000 with revenue of 900000 in 2023. Open since 1998, grew 12.5% from 2015-2020. Seats 120 guests, 2,400 sq ft, 3 ovens.";
    expect(rewriteDescription(text)).toBe(text);
  });

  test("turns shouted sentences into sentence case and keeps business abbreviations", () => {
    expect(
      rewriteDescription("AMAZING OPPORTUNITY!!! SBA PREQUALIFIED HVAC BUSINESS WITH 20 TRUCKS. Owner will train."),
    ).toBe("Amazing opportunity! SBA prequalified HVAC business with 20 trucks. Owner will train.");
  });

  test("leaves normal capitalisation, a single shouted word and short acronyms alone", () => {
    const text = "A GREAT location near I-35 in Austin, TX. Run by the same family since 1980.";
    expect(rewriteDescription(text)).toBe(text);
  });

  test("normalises whitespace and punctuation but keeps paragraphs and line breaks", () => {
    expect(
      rewriteDescription(
        "  Busy   cafe ,near campus  .\r\n\r\n\r\nFeatures:\n- espresso bar\n-  patio\u00a0seating ;  wifi\n",
      ),
    ).toBe("Busy cafe, near campus.\n\nFeatures:\n- espresso bar\n- patio seating; wifi");
  });

  test("is idempotent and keeps the partner's words otherwise", () => {
    const samples = [
      "Established restaurant with loyal customers.",
      "WOW. CALL 512 555 0100 NOW!!",
      "Contact: jane@example.com.\n\nProfitable.",
    ];
    for (const s of samples) expect(rewriteDescription(rewriteDescription(s))).toBe(rewriteDescription(s));
    expect(rewriteDescription("Established restaurant with loyal customers.")).toBe(
      "Established restaurant with loyal customers.",
    );
  });

  test("a description made only of contact details becomes empty", () => {
    expect(rewriteDescription("Call 512-555-0100. jane@example.com")).toBe("");
  });
});

test("removeContactDetails leaves text without contact details untouched", () => {
  const text = "Revenue 1,000,000; SDE 250,000 (2023).";
  expect(removeContactDetails(text)).toBe(text);
});

test("closes the gaps that removed contact details leave behind", () => {
  expect(
    rewriteDescription(
      "GREAT CAFE FOR SALE!!! Call 512-555-0199 or write owner@cafe-example.com. Visit www.cafe-example.com   today.",
    ),
  ).toBe("Great cafe for sale! Today.");
  expect(rewriteDescription("For more info contact John at john@x.com or (512) 555-0100. Serious buyers only!!")).toBe(
    "For more info contact John. Serious buyers only!",
  );
  expect(rewriteDescription("Revenue $1.2M, SDE $300k. Reach me on 512 555 0100, thanks.")).toBe(
    "Revenue $1.2M, SDE $300k. Thanks.",
  );
});

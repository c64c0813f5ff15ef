import { describe, expect, test } from "bun:test";
import { WARNING_CODES } from "./http/quality.ts";
import {
  BROKER_RUBRIC,
  brokerQuality,
  LISTING_RUBRIC,
  listingQuality,
  PHOTO_POINTS,
  postalCodeFits,
  type ListingQualityInput,
} from "./quality-rules.ts";

const wide = (i: number) => ({ url: `https://img.example.com/${i}.jpg`, state: "ready" as const, width: 1600 });
const complete: ListingQualityInput = {
  status: "FOR_SALE",
  title: "Downtown bakery",
  description:
    "A well-established bakery in downtown Austin with loyal customers, trained staff and a lease that runs until 2030.",
  location: { streetAddress1: "1 Main St", postalCode: "78701", country: "US", visibility: "SHOW_FULL_ADDRESS" },
  financials: { askingPrice: 250000, revenue: 500000 },
  photos: [1, 2, 3, 4, 5].map(wide),
  brokerPhone: null,
};
const codes = (q: { warnings: { code: string }[] }) => q.warnings.map((w) => w.code);

describe("listingQuality", () => {
  test("a complete listing has no warnings and scores 100", () => {
    expect(listingQuality(complete)).toEqual({ warnings: [], qualityScore: 100 });
  });

  test("the rubric's points add up to 100", () => {
    // A short description is the milder alternative of a missing one; photos share one capped pool.
    const {
      PHOTOS_TOO_FEW: _a,
      PHOTO_FAILED: _b,
      PHOTO_TOO_NARROW: _c,
      DESCRIPTION_TOO_SHORT: _g,
      ...others
    } = LISTING_RUBRIC;
    expect(PHOTO_POINTS + Object.values(others).reduce((a, b) => a + b, 0)).toBe(100);
    const { BIO_TOO_SHORT: _d, AVATAR_TOO_SMALL: _e, AVATAR_FAILED: _f, ...broker } = BROKER_RUBRIC;
    expect(Object.values(broker).reduce((a, b) => a + b, 0)).toBe(100);
  });

  test("an empty listing carries every listing warning that applies and scores 0", () => {
    const q = listingQuality({
      status: "UNDER_CONTRACT",
      location: { country: "US", visibility: "SHOW_FULL_ADDRESS", postalCode: "SW1A 1AA" },
      photos: [],
    });
    expect(codes(q)).toEqual([
      "TITLE_MISSING",
      "DESCRIPTION_MISSING",
      "STREET_ADDRESS_MISSING",
      "POSTAL_CODE_MISMATCH",
      "ASKING_PRICE_MISSING",
      "FINANCIALS_INCOMPLETE",
      "PHOTOS_TOO_FEW",
      "BROKER_PHONE_MISSING",
    ]);
    expect(q.qualityScore).toBe(0);
    expect(q.warnings.find((w) => w.code === "POSTAL_CODE_MISMATCH")).toEqual({
      path: "location.postalCode",
      code: "POSTAL_CODE_MISMATCH",
      message: "SW1A 1AA is not a postal code of US: check the code and the country",
    });
  });

  test("fewer than 5 photos cost 6 points per missing photo", () => {
    const q = listingQuality({ ...complete, photos: complete.photos.slice(0, 3) });
    expect(q.warnings).toEqual([
      { path: "photos", code: "PHOTOS_TOO_FEW", message: "3 photos; listings with at least 5 get more inquiries" },
    ]);
    expect(q.qualityScore).toBe(88);
  });

  test("a narrow photo is warned about only once processed; a failed one says why and what to do", () => {
    const photos = [
      ...complete.photos.slice(0, 3),
      { url: "https://x/n.jpg", state: "ready" as const, width: 800 },
      { url: "https://x/p.jpg", state: "pending" as const, width: null },
      { url: "https://x/f.jpg", state: "failed" as const, failureReason: "HTTP 404" },
    ];
    const q = listingQuality({ ...complete, photos });
    expect(q.warnings.map((w) => [w.path, w.code])).toEqual([
      ["photos[3]", "PHOTO_TOO_NARROW"],
      ["photos[5]", "PHOTO_FAILED"],
    ]);
    expect(q.warnings[0]!.message).toContain("800 px wide");
    expect(q.warnings[1]!.message).toContain("HTTP 404");
    expect(q.qualityScore).toBe(100 - 3 - 6);
  });

  test("photo costs are capped", () => {
    const photos = Array.from({ length: 20 }, (_, i) => ({ url: `https://x/${i}`, state: "failed" as const }));
    expect(listingQuality({ ...complete, photos }).qualityScore).toBe(100 - PHOTO_POINTS);
  });

  test("a very short or blank description is warned about", () => {
    expect(codes(listingQuality({ ...complete, description: "Nice shop." }))).toEqual(["DESCRIPTION_TOO_SHORT"]);
    expect(codes(listingQuality({ ...complete, description: "   " }))).toEqual(["DESCRIPTION_MISSING"]);
  });

  test("a broker phone is asked for only when the listing is UNDER_CONTRACT", () => {
    expect(codes(listingQuality({ ...complete, status: "UNDER_CONTRACT" }))).toEqual(["BROKER_PHONE_MISSING"]);
    expect(codes(listingQuality({ ...complete, status: "UNDER_CONTRACT", brokerPhone: "+1 512 555 0100" }))).toEqual(
      [],
    );
  });

  test("either revenue or sde is enough; an asking price is always asked for", () => {
    expect(codes(listingQuality({ ...complete, financials: { askingPrice: 1, sde: 2 } }))).toEqual([]);
    expect(codes(listingQuality({ ...complete, financials: { revenue: 2 } }))).toEqual(["ASKING_PRICE_MISSING"]);
  });
});

describe("postalCodeFits", () => {
  test("known countries are checked, unknown ones never warned about", () => {
    expect(postalCodeFits("US", "78701")).toBe(true);
    expect(postalCodeFits("US", "78701-1234")).toBe(true);
    expect(postalCodeFits("US", "7870")).toBe(false);
    expect(postalCodeFits("GB", "sw1a 1aa")).toBe(true);
    expect(postalCodeFits("CA", "K1A 0B1")).toBe(true);
    expect(postalCodeFits("CA", "78701")).toBe(false);
    expect(postalCodeFits("NL", "1012 AB")).toBe(true);
    expect(postalCodeFits("ZZ", "anything")).toBe(true);
  });
});

describe("brokerQuality", () => {
  test("a complete broker scores 100; an avatar under 400x400 once processed is warned about", () => {
    const full = {
      phone: "+1 512 555 0100",
      avatarUrl: "https://x/a.jpg",
      avatar: { state: "ready", width: 800, height: 800 },
      bio: "Twenty years selling restaurants and bakeries in Central Texas.",
      licenses: [{ state: "TX" }],
    };
    expect(brokerQuality(full)).toEqual({ warnings: [], qualityScore: 100 });
    const small = brokerQuality({ ...full, avatar: { state: "ready", width: 300, height: 500 } });
    expect(small.warnings).toEqual([
      { path: "avatarUrl", code: "AVATAR_TOO_SMALL", message: "Image is 300x500 px; send one at least 400x400 px" },
    ]);
    expect(small.qualityScore).toBe(85);
    expect(codes(brokerQuality({ ...full, avatar: { state: "pending" } }))).toEqual([]);
  });

  test("an empty broker scores 0", () => {
    const q = brokerQuality({});
    expect(codes(q)).toEqual(["BROKER_PHONE_MISSING", "AVATAR_MISSING", "BIO_MISSING", "LICENSE_MISSING"]);
    expect(q.qualityScore).toBe(0);
  });
});

test("every code the rules produce is in the closed list", () => {
  expect(new Set<string>(WARNING_CODES)).toEqual(
    new Set([...Object.keys(LISTING_RUBRIC), ...Object.keys(BROKER_RUBRIC)]),
  );
});

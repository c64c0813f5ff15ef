// The quality rules (issue 24): pure functions of a stored record (its document, its media's processing state and
// its broker's phone), so every answer that shows warnings (PUT, dry run, read-back, a batch's items, the processing
// report) computes the same ones. The rubric in docs/partner-api.md is this file: keep them together.
import type { BrokerWarningCode, ListingWarningCode, Quality, QualityWarning } from "./http/quality.ts";

/** Below these a photo or an avatar looks poor on the buyer's page (the media service's own recommendations). */
export const RECOMMENDED_PHOTO_WIDTH = 1200;
export const RECOMMENDED_AVATAR_SIDE = 400;
export const RECOMMENDED_PHOTO_COUNT = 5;
/** A description (or bio) shorter than this, in characters once trimmed, tells a buyer next to nothing. */
export const SHORT_DESCRIPTION = 100;
export const SHORT_BIO = 30;

/** Points each warning costs; the score is 100 minus their sum (photo costs are capped at PHOTO_POINTS). */
export const LISTING_RUBRIC: Record<ListingWarningCode, number> = {
  PHOTOS_TOO_FEW: 6, // per photo short of 5
  PHOTO_FAILED: 6, // per photo
  PHOTO_TOO_NARROW: 3, // per photo
  DESCRIPTION_MISSING: 20,
  DESCRIPTION_TOO_SHORT: 10,
  TITLE_MISSING: 5,
  ASKING_PRICE_MISSING: 15,
  FINANCIALS_INCOMPLETE: 10,
  POSTAL_CODE_MISMATCH: 5,
  STREET_ADDRESS_MISSING: 5,
  BROKER_PHONE_MISSING: 10,
};
export const PHOTO_POINTS = 30;

export const BROKER_RUBRIC: Record<BrokerWarningCode, number> = {
  BROKER_PHONE_MISSING: 30,
  AVATAR_MISSING: 30,
  AVATAR_FAILED: 30,
  AVATAR_TOO_SMALL: 15,
  BIO_MISSING: 25,
  BIO_TOO_SHORT: 10,
  LICENSE_MISSING: 15,
};

/**
 * Postal code shapes of the countries partners list in most; a country not named here is never warned about.
 * Matched case-insensitively after trimming.
 */
export const POSTAL_CODE_PATTERNS: Readonly<Record<string, RegExp>> = {
  US: /^\d{5}(?:-\d{4})?$/,
  CA: /^[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d$/i,
  GB: /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/i,
  IE: /^[A-Z]\d[\dW] ?[A-Z\d]{4}$/i,
  AU: /^\d{4}$/,
  NZ: /^\d{4}$/,
  DE: /^\d{5}$/,
  FR: /^\d{5}$/,
  ES: /^\d{5}$/,
  IT: /^\d{5}$/,
  MX: /^\d{5}$/,
  NL: /^\d{4} ?[A-Z]{2}$/i,
  BE: /^\d{4}$/,
  CH: /^\d{4}$/,
  AT: /^\d{4}$/,
  DK: /^\d{4}$/,
  NO: /^\d{4}$/,
  SE: /^\d{3} ?\d{2}$/,
  PL: /^\d{2}-\d{3}$/,
  PT: /^\d{4}-\d{3}$/,
  IN: /^\d{6}$/,
  SG: /^\d{6}$/,
  ZA: /^\d{4}$/,
  BR: /^\d{5}-?\d{3}$/,
  JP: /^\d{3}-?\d{4}$/,
};

export function postalCodeFits(country: string, postalCode: string): boolean {
  const pattern = POSTAL_CODE_PATTERNS[country.toUpperCase()];
  return pattern ? pattern.test(postalCode.trim()) : true;
}

/** A photo as stored: the partner's URL and, once the media service has seen it, its state and size. */
export interface PhotoQualityInput {
  url: string;
  state?: "pending" | "ready" | "failed" | null;
  width?: number | null;
  failureReason?: string | null;
}

/** What the listing rules read: the stored document's fields, its photos' processing and its broker's phone. */
export interface ListingQualityInput {
  status: string;
  title?: string | null;
  description?: string | null;
  location: { streetAddress1?: string | null; postalCode?: string | null; country: string; visibility: string };
  financials?: Record<string, unknown> | null;
  photos: readonly PhotoQualityInput[];
  brokerPhone?: string | null;
}

const blank = (s: string | null | undefined) => !s || s.trim().length === 0;
const has = (o: Record<string, unknown> | null | undefined, key: string) =>
  o != null && o[key] !== undefined && o[key] !== null;
const textLength = (s: string) => [...s.trim()].length;
// A text of n UTF-16 units holds at least n/2 code points: a long description (the usual case) is never short,
// and counting its code points was the batch path's costliest rule.
const shorterThan = (s: string, points: number) => {
  const t = s.trim();
  return t.length < 2 * points && [...t].length < points;
};

/** The listing's warnings, in field order, and its score. */
export function listingQuality(input: ListingQualityInput): Quality {
  const warnings: QualityWarning[] = [];
  let photoCost = 0;
  let otherCost = 0;
  const add = (path: string, code: ListingWarningCode, message: string, times = 1) => {
    warnings.push({ path, code, message });
    const cost = LISTING_RUBRIC[code] * times;
    if (code.startsWith("PHOTO")) photoCost += cost;
    else otherCost += cost;
  };

  if (blank(input.title))
    add(
      "title",
      "TITLE_MISSING",
      "No title: buyers see the business type as the headline; send a short title that says what the business is",
    );
  if (blank(input.description))
    add(
      "description",
      "DESCRIPTION_MISSING",
      "No description: buyers skip listings without one; describe the business, its history, staff and why it is for sale",
    );
  else if (shorterThan(input.description!, SHORT_DESCRIPTION))
    add(
      "description",
      "DESCRIPTION_TOO_SHORT",
      `Description is ${textLength(input.description!)} characters; at least ${SHORT_DESCRIPTION} tell a buyer what the business is`,
    );

  const loc = input.location;
  if (loc.visibility === "SHOW_FULL_ADDRESS" && blank(loc.streetAddress1))
    add(
      "location.streetAddress1",
      "STREET_ADDRESS_MISSING",
      "visibility is SHOW_FULL_ADDRESS but there is no streetAddress1: buyers see only the city; send the street address or a narrower visibility",
    );
  if (!blank(loc.postalCode) && !postalCodeFits(loc.country, loc.postalCode!))
    add(
      "location.postalCode",
      "POSTAL_CODE_MISMATCH",
      `${loc.postalCode} is not a postal code of ${loc.country}: check the code and the country`,
    );

  if (!has(input.financials, "askingPrice"))
    add(
      "financials.askingPrice",
      "ASKING_PRICE_MISSING",
      "No asking price: buyers filtering by price never see this listing; send financials.askingPrice",
    );
  if (!has(input.financials, "revenue") && !has(input.financials, "sde"))
    add(
      "financials",
      "FINANCIALS_INCOMPLETE",
      "Neither revenue nor sde (cash flow): buyers cannot judge the price; send at least one of them",
    );

  const photos = input.photos;
  if (photos.length < RECOMMENDED_PHOTO_COUNT)
    add(
      "photos",
      "PHOTOS_TOO_FEW",
      `${photos.length} photo${photos.length === 1 ? "" : "s"}; listings with at least ${RECOMMENDED_PHOTO_COUNT} get more inquiries`,
      RECOMMENDED_PHOTO_COUNT - photos.length,
    );
  photos.forEach((p, i) => {
    if (p.state === "failed")
      add(
        `photos[${i}]`,
        "PHOTO_FAILED",
        `Could not be used (${p.failureReason ?? "processing failed"}); buyers do not see it. Fix the image at its URL, or send another URL`,
      );
    else if (p.state === "ready" && p.width != null && p.width < RECOMMENDED_PHOTO_WIDTH)
      add(
        `photos[${i}]`,
        "PHOTO_TOO_NARROW",
        `Image is ${p.width} px wide; send one at least ${RECOMMENDED_PHOTO_WIDTH} px wide so it stays sharp on large screens`,
      );
  });

  if (input.status === "UNDER_CONTRACT" && blank(input.brokerPhone))
    add(
      "broker.phone",
      "BROKER_PHONE_MISSING",
      "The listing is UNDER_CONTRACT and its broker has no phone: backup buyers can only write; add the broker's phone",
    );

  return { warnings, qualityScore: clampScore(100 - Math.min(photoCost, PHOTO_POINTS) - otherCost) };
}

/** What the broker rules read: the stored document's fields and the avatar's processing. */
export interface BrokerQualityInput {
  phone?: string | null;
  avatarUrl?: string | null;
  avatar?: {
    state?: string | null;
    width?: number | null;
    height?: number | null;
    failureReason?: string | null;
  } | null;
  bio?: string | null;
  licenses?: readonly unknown[] | null;
}

export function brokerQuality(input: BrokerQualityInput): Quality {
  const warnings: QualityWarning[] = [];
  let cost = 0;
  const add = (path: string, code: BrokerWarningCode, message: string) => {
    warnings.push({ path, code, message });
    cost += BROKER_RUBRIC[code];
  };
  if (blank(input.phone))
    add(
      "phone",
      "BROKER_PHONE_MISSING",
      "No phone: buyers can only write to this broker; add a phone with the country code",
    );
  if (blank(input.avatarUrl))
    add(
      "avatarUrl",
      "AVATAR_MISSING",
      "No photo of the broker: profiles with a face get more inquiries; send avatarUrl",
    );
  else if (input.avatar?.state === "failed")
    add(
      "avatarUrl",
      "AVATAR_FAILED",
      `Could not be used (${input.avatar.failureReason ?? "processing failed"}); fix the image at its URL, or send another URL`,
    );
  else if (
    input.avatar?.state === "ready" &&
    input.avatar.width != null &&
    input.avatar.height != null &&
    (input.avatar.width < RECOMMENDED_AVATAR_SIDE || input.avatar.height < RECOMMENDED_AVATAR_SIDE)
  )
    add(
      "avatarUrl",
      "AVATAR_TOO_SMALL",
      `Image is ${input.avatar.width}x${input.avatar.height} px; send one at least ${RECOMMENDED_AVATAR_SIDE}x${RECOMMENDED_AVATAR_SIDE} px`,
    );
  if (blank(input.bio)) add("profile.bio", "BIO_MISSING", "No bio: tell buyers who the broker is and what they sell");
  else if (textLength(input.bio!) < SHORT_BIO)
    add(
      "profile.bio",
      "BIO_TOO_SHORT",
      `Bio is ${textLength(input.bio!)} characters; at least ${SHORT_BIO} say who the broker is`,
    );
  if (!input.licenses || input.licenses.length === 0)
    add("licenses", "LICENSE_MISSING", "No license: buyers in many states look for a licensed broker; send licenses");
  return { warnings, qualityScore: clampScore(100 - cost) };
}

const clampScore = (n: number) => Math.max(0, Math.min(100, Math.round(n)));

// What to do about each quality warning code, in one sentence a partner's staff can act on: the partner portal's
// overview shows it beside each code's count (a single listing's warning carries its own message, quality-rules.ts).
// Typed by the closed list of codes, so a new code cannot be added without its fix.
import type { WarningCode } from "./http/quality.ts";
import {
  RECOMMENDED_AVATAR_SIDE,
  RECOMMENDED_PHOTO_COUNT,
  RECOMMENDED_PHOTO_WIDTH,
  SHORT_BIO,
  SHORT_DESCRIPTION,
} from "./quality-rules.ts";

export const WARNING_FIXES: Readonly<Record<WarningCode, string>> = {
  PHOTOS_TOO_FEW: `Send at least ${RECOMMENDED_PHOTO_COUNT} photos (photos[].url): listings with more photos get more inquiries.`,
  PHOTO_TOO_NARROW: `Send images at least ${RECOMMENDED_PHOTO_WIDTH} px wide so they stay sharp on large screens.`,
  PHOTO_FAILED:
    "Fix the image at its URL (it must answer 200 with a JPEG, PNG or WebP image) or send another URL; the listing's page says why each failed.",
  DESCRIPTION_MISSING: "Send a description: the business, its history, its staff and why it is for sale.",
  DESCRIPTION_TOO_SHORT: `Write at least ${SHORT_DESCRIPTION} characters of description.`,
  TITLE_MISSING: "Send a short title that says what the business is.",
  ASKING_PRICE_MISSING: "Send financials.askingPrice: buyers filtering by price never see listings without one.",
  FINANCIALS_INCOMPLETE: "Send financials.revenue or financials.sde (cash flow) so buyers can judge the price.",
  POSTAL_CODE_MISMATCH: "Check location.postalCode against location.country.",
  STREET_ADDRESS_MISSING: "Send location.streetAddress1, or choose a narrower visibility than SHOW_FULL_ADDRESS.",
  BROKER_PHONE_MISSING: "Add the broker's phone (with the country code) with a PUT of the broker.",
  AVATAR_MISSING: "Send the broker's avatarUrl: profiles with a face get more inquiries.",
  AVATAR_TOO_SMALL: `Send an avatar at least ${RECOMMENDED_AVATAR_SIDE} px on each side.`,
  AVATAR_FAILED: "Fix the avatar image at its URL or send another avatarUrl.",
  BIO_MISSING: "Send profile.bio: a few sentences about the broker.",
  BIO_TOO_SHORT: `Write at least ${SHORT_BIO} characters of bio.`,
  LICENSE_MISSING: "Send the broker's licenses (licenseNumber, state, country).",
};

// schema.org data for a listing page (JSON-LD): the same public facts the page shows, the address only as far
// as its visibility allows (PublicListing already lacks the hidden parts).
import type { PublicListing } from "@pss/contracts";
import { headlineOf, largestImageUrl } from "./html.ts";

export function listingJsonLd(l: PublicListing): Record<string, unknown> {
  const { streetAddress1, city, state, postalCode, country } = l.location;
  const address = {
    "@type": "PostalAddress",
    ...(streetAddress1 ? { streetAddress: streetAddress1 } : {}),
    ...(city ? { addressLocality: city } : {}),
    addressRegion: state,
    ...(postalCode ? { postalCode } : {}),
    addressCountry: country,
  };
  const images = l.photos.map((p) => largestImageUrl(p.variants)).filter((u): u is string => u !== null);
  return {
    "@context": "https://schema.org",
    "@type": "Product",
    name: headlineOf(l),
    ...(l.description ? { description: l.description } : {}),
    url: l.serviceListingUrl,
    category: l.businessType,
    ...(images.length ? { image: images } : {}),
    offers: {
      "@type": "Offer",
      url: l.serviceListingUrl,
      priceCurrency: "USD",
      ...(typeof l.financials.askingPrice === "number" ? { price: l.financials.askingPrice } : {}),
      // Under contract: still shown, but a deal is under way.
      availability: l.underContract ? "https://schema.org/LimitedAvailability" : "https://schema.org/InStock",
      seller: { "@type": "Person", name: l.broker.name, url: l.broker.serviceProfileUrl },
      availableAtOrFrom: { "@type": "Place", address },
    },
  };
}

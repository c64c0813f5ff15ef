import { describe, expect, test } from "bun:test";
import { createGazetteer, distanceKm, foldName } from "./gazetteer.ts";

const gazetteer = createGazetteer();

describe("a listing's public address as a point", () => {
  test("a US ZIP code shown by the address wins over its city", () => {
    const zip = gazetteer.locate({ city: "Austin", state: "TX", postalCode: "78701", country: "US" })!;
    expect(zip.lat).toBeCloseTo(30.27, 1);
    expect(zip.lon).toBeCloseTo(-97.74, 1);
  });

  test("without a ZIP code the city of that state: Portland, OR and Portland, ME are 4,000 km apart", () => {
    const or = gazetteer.locate({ city: "Portland", state: "OR", country: "US" })!;
    const me = gazetteer.locate({ city: "portland", state: "Maine", country: "US" })!;
    expect(or.lon).toBeCloseTo(-122.68, 1);
    expect(me.lon).toBeCloseTo(-70.26, 1);
    expect(distanceKm(or, me)).toBeGreaterThan(4000);
  });

  test("only the state shown (the city hidden): no point, so a distance filter never reveals the city", () => {
    expect(gazetteer.locate({ state: "TX", country: "US" })).toBeNull();
  });

  test("outside the US by city and country; an unknown city or state is no point", () => {
    expect(gazetteer.locate({ city: "Zürich", state: "ZH", country: "CH" })?.lat).toBeCloseTo(47.37, 1);
    expect(gazetteer.locate({ city: "Nowhereville", state: "TX", country: "US" })).toBeNull();
    expect(gazetteer.locate({ city: "Austin", state: "Atlantis", country: "US" })).toBeNull();
  });
});

describe("what a buyer types as 'near'", () => {
  test("a ZIP code, 'City, ST', 'City, State', 'City, Country' and a city alone", () => {
    expect(gazetteer.find("78701")?.label).toBe("ZIP 78701");
    expect(gazetteer.find("austin, tx")?.label).toBe("Austin, TX");
    expect(gazetteer.find("Portland, Oregon")?.label).toBe("Portland, OR");
    expect(gazetteer.find("Lyon, FR")?.label).toBe("Lyon, FR");
    // A US city of the name first: the largest Portland in the US, not one elsewhere.
    expect(gazetteer.find("Portland")?.label).toBe("Portland, OR");
  });

  test("what names no known place is null, never a guess", () => {
    for (const text of ["00000", "Springfield, ZZ", "Nowhereville", "a, b, c", ""])
      expect(gazetteer.find(text)).toBeNull();
  });
});

test("names compare without case, accents or punctuation", () => {
  expect(foldName("Coeur d'Alene")).toBe("coeur d alene");
  expect(foldName("SÃO  Paulo")).toBe(foldName("sao paulo"));
});

test("the haversine distance: Austin to Dallas is about 293 km", () => {
  expect(distanceKm({ lat: 30.2672, lon: -97.7431 }, { lat: 32.7767, lon: -96.797 })).toBeCloseTo(293, -1);
});

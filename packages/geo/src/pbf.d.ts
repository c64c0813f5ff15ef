// The part of pbf (Mapbox's protobuf reader, 3.x; it ships no types) the gazetteer reads cities.pbf with.
declare module "pbf" {
  export default class Pbf {
    constructor(buffer: Uint8Array);
    pos: number;
    length: number;
    readMessage<T>(read: (tag: number, result: T, pbf: Pbf) => void, result: T): T;
    readString(): string;
    readVarint(): number;
    readSVarint(): number;
  }
}

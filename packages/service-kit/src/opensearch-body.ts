// The one cast between the request bodies we write as plain JSON (index settings and mappings, queries, bulk
// lines, alias actions) and the OpenSearch client's generated request types, which model each option as a closed
// union our literal objects do not meet although OpenSearch accepts the JSON. The type comes from where the body goes.
export function openSearchBody<T>(body: unknown): T {
  return body as T;
}

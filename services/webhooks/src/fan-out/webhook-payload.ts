// The body a receiver gets: {type, timestamp, data}. `data` is the fact's payload as its producer wrote it, plus
// the URLs of the records it names. The rule lives in @pss/contracts (withPublicUrls): the API builds the same body
// when it replays events to an endpoint.
export { withPublicUrls } from "@pss/contracts";

// Stored brokers to the inputs of the quality rules (@pss/contracts quality-rules.ts). Pure: a caller that holds a
// stored broker (a PUT's read-back, a dry run's would-be record, a batch item) gets the same warnings as the
// read-back shows. Listings: listings/listing-quality.ts.
import { brokerQuality, type Quality } from "@pss/contracts";
import type { BrokerDocument } from "./broker-document.ts";
import type { StoredBroker } from "./broker-repository.ts";

/** `avatar`: the stored avatar's processing, which applies only while avatarUrl is the URL it was processed from. */
export function brokerDocumentQuality(document: BrokerDocument, avatar: StoredBroker["avatar"] | null): Quality {
  return brokerQuality({
    phone: document.phone,
    avatarUrl: document.avatarUrl,
    avatar,
    bio: document.profile?.bio,
    licenses: document.licenses,
  });
}

export function storedBrokerQuality(broker: StoredBroker): Quality {
  return brokerDocumentQuality(broker.document, broker.avatar);
}

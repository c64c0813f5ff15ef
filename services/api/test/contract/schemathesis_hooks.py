"""Schemathesis hooks for the contract test (services/api/test/contract.test.ts).

The OpenAPI document declares every rule JSON Schema can express. A few rules relate two values or depend on
what is stored (the document states them in prose); for *positive* cases only, these hooks make generated
requests obey them, so that "schema-valid request refused" means a real disagreement. Negative cases are never
touched. The contract test creates the broker CONTRACT_BROKER_ID before the run.
"""

import os
from datetime import datetime

import schemathesis

CONTRACT_BROKER_ID = os.environ.get("CONTRACT_BROKER_ID", "contract-broker")
# The partner's own office and organization: without them every positive lead-count request would be a 404.
KNOWN_IDS = {"officeId": os.environ.get("CONTRACT_OFFICE_ID"), "organizationId": os.environ.get("CONTRACT_ORGANIZATION_ID")}
LISTINGS_PUT = "/partner/v1/listings/{externalListingId}"
WEBHOOK_ENDPOINT_PUT = "/partner/v1/webhook-endpoints/{endpointId}"
LEAD_COUNTS = ("/partner/v1/offices/{officeId}/leads/count", "/partner/v1/organizations/{organizationId}/leads/count")
# Routes that read startDate/endDate as the lead counts do (a range whose start is after its end is refused).
DATE_RANGES = (*LEAD_COUNTS, "/partner/v1/listings/{externalListingId}/stats")
DEFAULT_LOCATION = {"city": "Austin", "state": "TX", "country": "US", "visibility": "SHOW_CITY_STATE"}


def _is_positive(case) -> bool:
    meta = getattr(case, "meta", None)
    mode = getattr(getattr(meta, "generation", None), "mode", None)
    return mode is not None and str(getattr(mode, "value", mode)) == "positive"


def _instant(value: str):
    try:
        return datetime.fromisoformat(value.strip(JS_WHITESPACE).replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None


# What JavaScript's String.prototype.trim() removes (Python's str.strip() differs, e.g. on U+FEFF).
JS_WHITESPACE = "\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _price(value):
    text = str(value).strip(JS_WHITESPACE)
    try:
        return float(text) if text else None
    except ValueError:
        return None


@schemathesis.hook
def map_case(context, case):
    if not _is_positive(case):
        return case
    path = case.operation.path
    query = case.query if isinstance(case.query, dict) else None

    # A cursor is only ever valid as the nextCursor the server handed out; a generated one is refused (400).
    if query and "cursor" in query:
        query.pop("cursor")

    if path in LEAD_COUNTS and isinstance(case.path_parameters, dict):
        for name, value in KNOWN_IDS.items():
            if value and name in case.path_parameters:
                case.path_parameters[name] = value

    # startDate must not be after endDate.
    if query and path in DATE_RANGES and isinstance(query.get("startDate"), str) and isinstance(query.get("endDate"), str):
        start, end = _instant(query["startDate"]), _instant(query["endDate"])
        if start is not None and end is not None and start > end:
            query["startDate"], query["endDate"] = query["endDate"], query["startDate"]

    # The lowest of a range (price, revenue, SDE) must not be above the highest.
    for low_name, high_name in (("minPrice", "maxPrice"), ("minRevenue", "maxRevenue"), ("minSde", "maxSde")):
        if query and path == "/v1/listings" and low_name in query and high_name in query:
            low, high = _price(query[low_name]), _price(query[high_name])
            if low is not None and high is not None and low > high:
                query[low_name], query[high_name] = query[high_name], query[low_name]

    if path == LISTINGS_PUT and case.operation.method.upper() == "PUT" and isinstance(case.body, dict):
        body = case.body
        # A listing is created with its required parts (400 otherwise); updates send only changes.
        broker = body.get("broker")
        if isinstance(broker, dict) and "brokerExternalId" in body:
            body["brokerExternalId"] = broker.get("externalBrokerId")
        if not isinstance(broker, dict) and "brokerExternalId" not in body:
            body["brokerExternalId"] = CONTRACT_BROKER_ID
        body.setdefault("status", "FOR_SALE")
        body.setdefault("businessType", "Retail")
        location = body.get("location")
        if not isinstance(location, dict):
            body["location"] = dict(DEFAULT_LOCATION)
        else:
            for key, value in DEFAULT_LOCATION.items():
                location.setdefault(key, value)
        # Each photo URL may appear once.
        photos = body.get("photos")
        if isinstance(photos, list):
            seen = set()
            body["photos"] = [p for p in photos if not (isinstance(p, dict) and (p.get("url") in seen or seen.add(p.get("url"))))]

    if path == WEBHOOK_ENDPOINT_PUT and case.operation.method.upper() == "PUT" and isinstance(case.body, dict):
        # A webhook endpoint is created with its url and events (400 otherwise); updates send only changes.
        case.body.setdefault("url", "https://hooks.example.com/pss")
        case.body.setdefault("events", ["listing.published"])
    return case

// Realistic partner bodies, plain JavaScript so both the Node load generator and Bun scripts can import it.
const WORDS =
  "established profitable restaurant loyal customers downtown location recently renovated kitchen equipment included trained staff strong online reviews growing catering revenue seller will train motivated owner retiring lease renewable parking ample foot traffic".split(
    " ",
  );

function text(length, seed) {
  let out = "";
  let i = seed;
  while (out.length < length) {
    out += (out ? " " : "") + WORDS[i % WORDS.length];
    i = (i * 31 + 7) % 9973;
  }
  return out.slice(0, length - 1) + ".";
}

export function brokerBody(n = 0) {
  return {
    name: `Broker ${n}`,
    email: `broker${n}@brokerage.example.com`,
    phone: "+1 512 555 0100",
    forwardingEmail: `crm+${n}@crm.example.com`,
    profile: {
      bio: text(400, n),
      website: "https://brokerage.example.com",
      linkedInUrl: "https://www.linkedin.com/in/example",
    },
    licenses: [
      { licenseNumber: `TX-${100000 + n}`, state: "TX", country: "US" },
      { licenseNumber: `OK-${200000 + n}`, state: "OK", country: "US" },
    ],
    serviceAreas: [
      { city: "Austin", state: "TX", country: "US" },
      { county: "Travis", state: "TX", country: "US" },
      { state: "OK", country: "US" },
    ],
  };
}

/** About 3 KB: 8 photos, financials, property, financing and a 1,500-character description. */
export function listingBody(brokerExternalId, n = 0, opts = {}) {
  const descriptionLength = opts.descriptionLength ?? 1500;
  return {
    brokerExternalId,
    status: "FOR_SALE",
    businessType: ["Restaurant", "Retail", "Service Business", "E-commerce", "Manufacturing"][n % 5],
    title: `Profitable business #${n} with loyal customers`,
    description: text(descriptionLength, n),
    establishedAt: "2012-03-01T00:00:00Z",
    location: {
      streetAddress1: `${100 + (n % 900)} Congress Ave`,
      city: "Austin",
      state: "TX",
      postalCode: "78701",
      country: "US",
      visibility: "SHOW_CITY_STATE",
    },
    financials: {
      askingPrice: 250000 + (n % 1000) * 1000,
      revenue: 900000,
      sde: 180000,
      inventory: 40000,
      ffande: 60000,
    },
    property: {
      propertyKind: "RENTED",
      areaSqft: 2400,
      rentData: { amount: 6500, frequency: "MONTHLY", leaseRenewable: true, leaseExpiration: "2030-12-31T00:00:00Z" },
    },
    financing: { financingAvailable: true, sbaPrequalified: true, minimumDownPayment: 50000 },
    photos: Array.from({ length: opts.photos ?? 8 }, (_, i) => ({
      url: `https://images.partner.example.com/listings/${n}/photo-${i + 1}.jpg`,
      sortKey: i + 1,
    })),
  };
}

export function externalId(prefix, n) {
  return `${prefix}-${n.toString(36).padStart(6, "0")}`;
}

-- The partner portal (issue 42; docs/portal.md): the people of a partner who sign in to see their listings,
-- webhooks and API requests in a browser. Owners: services/api writes portal_users (the partner's
-- PUT/DELETE /partner/v1/portal-users/{email} and the admin CLI's `portal-users`, through the API's
-- `portal-users` module); services/portal writes the invitation columns of portal_users (it sends the invitation
-- e-mail) and last_sign_in_at, and owns the sign-in requests, links and sessions.

-- One row per person and partner: the same address may be invited by two partners (a consultant); each invitation
-- is its own user, and a sign-in e-mail carries one link per partner. Addresses are stored lower-cased.
CREATE TABLE portal_users (
  id bigserial PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners(id) ON DELETE CASCADE,
  email text NOT NULL,
  -- Sees lead figures (inquiries per day, lead counts, lead.received deliveries); as a key's lead tracking.
  lead_access boolean NOT NULL DEFAULT false,
  -- Who invited or last changed the user: an API key's ID, or NULL for an operator (admin CLI).
  changed_by_key_id bigint,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  -- The invitation e-mail, sent by the portal: pending (due at invitation_due_at), sent, or failed (given up after
  -- the portal's attempts; the person can still ask for a sign-in link on the sign-in page).
  invitation_state text NOT NULL DEFAULT 'pending' CHECK (invitation_state IN ('pending', 'sent', 'failed')),
  invitation_attempts integer NOT NULL DEFAULT 0,
  invitation_due_at timestamptz(3) DEFAULT now(),
  invitation_sent_at timestamptz(3),
  last_sign_in_at timestamptz(3),
  UNIQUE (partner_id, email)
);
CREATE INDEX portal_users_email ON portal_users (email);
CREATE INDEX portal_users_invitation_due ON portal_users (invitation_due_at) WHERE invitation_state = 'pending';
COMMENT ON TABLE portal_users IS 'owner: services/api (portal-users: the partner''s PUT/DELETE and the admin CLI); services/portal: invitation_* (it sends the invitation e-mail) and last_sign_in_at';

-- Every request for a sign-in link, known address or not, for the per-address and per-e-mail limits. Only SHA-256
-- hashes are kept (of the client address, IPv6 by /64, and of the lower-cased e-mail), and only for a day.
CREATE TABLE portal_sign_in_requests (
  id bigserial PRIMARY KEY,
  at timestamptz(3) NOT NULL DEFAULT now(),
  address_hash bytea NOT NULL,
  email_hash bytea NOT NULL
);
CREATE INDEX portal_sign_in_requests_address ON portal_sign_in_requests (address_hash, at);
CREATE INDEX portal_sign_in_requests_email ON portal_sign_in_requests (email_hash, at);
CREATE INDEX portal_sign_in_requests_at ON portal_sign_in_requests (at);
COMMENT ON TABLE portal_sign_in_requests IS 'owner: services/portal';

-- One-time sign-in links: only the SHA-256 of the link's token is stored, with the SHA-256 of the cookie of the
-- browser that asked for it (the link works only there), an expiry (15 minutes) and when it was used (once).
CREATE TABLE portal_sign_in_links (
  token_hash bytea PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES portal_users(id) ON DELETE CASCADE,
  browser_hash bytea NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3)
);
CREATE INDEX portal_sign_in_links_user ON portal_sign_in_links (user_id);
CREATE INDEX portal_sign_in_links_expires ON portal_sign_in_links (expires_at);
COMMENT ON TABLE portal_sign_in_links IS 'owner: services/portal';

-- Sessions: the SHA-256 of the session cookie (never the cookie), idle expiry (last_seen_at + 8 h) and absolute
-- expiry (expires_at = created_at + 7 days). Deleting a user's rows signs the user out everywhere.
CREATE TABLE portal_sessions (
  id_hash bytea PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES portal_users(id) ON DELETE CASCADE,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);
CREATE INDEX portal_sessions_expires ON portal_sessions (expires_at);
COMMENT ON TABLE portal_sessions IS 'owner: services/portal';

-- When an API key was last used (admin CLI `keys list`), so operators can tell live keys from forgotten ones
-- before rotating. Written by the API's authenticator at most once a minute per key and process, off the
-- request's path (docs/operations.md, "Runbook: admin CLI"): precise to about a minute, never a hot-row write
-- per request. NULL: not used since this column exists.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz(3);

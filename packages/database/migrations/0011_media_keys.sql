-- Image variants keep their media key (the content-addressed file name), no longer an absolute URL built from
-- PUBLIC_BASE_URL: the API builds URLs when it reads a record, so changing the public address or moving the
-- files to object storage needs no data migration. Every stored {width, height, format, url} whose URL ends in
-- /media/<name> becomes {width, height, format, key: <name>}, in array order; anything else is left as it is
-- (the API still shows a legacy url as written).

CREATE FUNCTION pg_temp.media_keys(variants jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(jsonb_agg(
           CASE WHEN v ? 'url' AND NOT v ? 'key' AND (v->>'url') ~ '/media/[0-9a-f]{64}\.(webp|jpg)$'
                THEN (v - 'url') || jsonb_build_object('key', substring(v->>'url' FROM '([0-9a-f]{64}\.(?:webp|jpg))$'))
                ELSE v END
           ORDER BY ordinality), '[]'::jsonb)
  FROM jsonb_array_elements(variants) WITH ORDINALITY AS e(v, ordinality)
$$;

UPDATE listing_photos SET variants = pg_temp.media_keys(variants)
WHERE jsonb_typeof(variants) = 'array' AND jsonb_path_exists(variants, '$[*] ? (exists(@.url))');

UPDATE brokers SET avatar_variants = pg_temp.media_keys(avatar_variants)
WHERE jsonb_typeof(avatar_variants) = 'array' AND jsonb_path_exists(avatar_variants, '$[*] ? (exists(@.url))');

DROP FUNCTION pg_temp.media_keys(jsonb);
